package backend_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"unicode/utf8"

	"runsdesk/runtime"
	"runsdesk/typo3/backend"
	"runsdesk/typo3/backend/backendtest"
	"runsdesk/typo3/roles"
)

// typo3MFAActive is what TYPO3 12 makes of a be_users.mfa value, in PHP's terms: json_decode
// as an array, then any provider entry whose "active" is true as (bool) reads it. It ignores
// that TYPO3 also needs a secret for TOTP and another active provider for recovery codes:
// counting those as on only makes the reference stricter.
func typo3MFAActive(mfa []byte) bool {
	if !utf8.Valid(mfa) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(mfa))
	dec.UseNumber()
	var providers map[string]any
	if dec.Decode(&providers) != nil || dec.More() {
		return false
	}
	for _, p := range providers {
		if props, ok := p.(map[string]any); ok && phpTruthy(props["active"]) {
			return true
		}
	}
	return false
}

// phpTruthy is PHP's (bool) of a json_decode'd value.
func phpTruthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != "" && v != "0"
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		return err != nil || f != 0
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return true
}

// FuzzMFAFailsClosed: whenever TYPO3 would find an active MFA provider in be_users.mfa, the
// flag the database works out says so too (it may say so for more values, never for fewer).
func FuzzMFAFailsClosed(f *testing.F) {
	for _, c := range mfaColumns {
		f.Add(c.mfa)
	}
	f.Add([]byte(`{"totp":{"active":false,"active":true}}`))
	f.Add([]byte(`{"totp":{"active":true},"totp":{"active":false}}`))
	f.Add([]byte(`{"totp":{"active":0.5},"x":{"active":-0}}`))
	f.Add([]byte(`{"totp":{"active":"false"}}`))
	f.Add([]byte(` {"totp" : {"active" : true }} `))
	f.Add([]byte(`{"a":{"b":{"active":true}}}`))
	f.Add([]byte(`{"totp":{"active":true}}{"x":1}`))
	s := newSite(f)
	backendtest.InsertGroup(f, s.db, roles.Group{UID: 1, Title: "Editors"})
	r := backend.New(s.db, mustParse(f, editors), runtime.RoleAdmin)
	n := 0
	f.Fuzz(func(t *testing.T, mfa []byte) {
		if !typo3MFAActive(mfa) {
			return
		}
		n++
		uid := backendtest.InsertUser(t, s.db, backendtest.User{Username: "f" + strconv.Itoa(n), UserGroups: "1", MFA: mfa})
		got, err := r.Account(context.Background(), uid, now)
		if err != nil {
			t.Fatalf("Account = %v", err)
		}
		if !got.MFA {
			t.Errorf("mfa %q: TYPO3 finds an active provider, the reader does not", mfa)
		}
	})
}
