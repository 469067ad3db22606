// Package ssodb keeps the people who sign in with single sign-on in the database: it adapts
// db.Identities to the handlers' Identities in package sso's terms.
package ssodb

import (
	"context"

	"runsdesk/db"
	"runsdesk/runtime"
	"runsdesk/sso"
)

// Store keeps the people who sign in with the provider in the database (db.Identities).
type Store struct {
	ids *db.Identities
}

// NewStore returns a Store on ids.
func NewStore(ids *db.Identities) Store { return Store{ids: ids} }

// SignIn returns the actor and session epoch of id (db.Identities.SignIn).
func (s Store) SignIn(ctx context.Context, id sso.Identity, ip string) (runtime.Actor, int64, error) {
	return s.ids.SignIn(ctx, db.ExternalPerson{Issuer: id.Issuer, Subject: id.Subject, Username: id.PreferredUsername,
		Name: id.Name, Email: id.Email, EmailVerified: id.EmailVerified, Role: id.Role, Tokens: db.ProviderTokens(id.Tokens)}, ip)
}

// Linked returns the subject and stored tokens of user uid (db.Identities.Linked).
func (s Store) Linked(ctx context.Context, uid int64) (string, sso.Tokens, error) {
	l, err := s.ids.Linked(ctx, uid)
	return l.Subject, sso.Tokens(l.Tokens), err
}

// Vouched records a later check of user uid (db.Identities.Vouched).
func (s Store) Vouched(ctx context.Context, uid int64, role runtime.Role, tokens sso.Tokens, ip string) error {
	return s.ids.Vouched(ctx, uid, role, db.ProviderTokens(tokens), ip)
}
