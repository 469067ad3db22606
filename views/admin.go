package views

import (
	"slices"
	"time"
)

// The admin pages of people and service accounts, and the addresses of their actions.
const (
	NavPeople       Nav = "people"
	NavTokens       Nav = "tokens"
	AdminPeoplePath     = "/admin/people"
	AdminTokensPath     = "/admin/tokens"
)

// PersonActionPath is the address of action (disable, enable, role, password, sessions,
// mfa-reset) on people; the form names the person (field username).
func PersonActionPath(action string) string { return AdminPeoplePath + "/" + action }

// TokenActionPath is the address of action (revoke, rotate) on service accounts; the form
// names the account (field name).
func TokenActionPath(action string) string { return AdminTokensPath + "/" + action }

// Secret is a password or token shown this once, in the answer of the form that made it: for
// whom (Owner) and what it is (Label).
type Secret struct {
	Label string
	Owner string
	Value string
}

// PersonRow is one person on the people page. MFA is shown only when the desk offers
// two-factor sign-in.
type PersonRow struct {
	Username           string
	Role               string
	Email              string
	Disabled           bool
	MustChangePassword bool
	MFA                bool
	LastLogin          time.Time
	Created            time.Time
	// Self marks the signed-in admin's own row.
	Self bool
}

// PersonForm is the add form as typed, and the error of the form that was refused: Field is
// the input it concerns ("username", "role", "email"), Target the person a row's form was
// about, with the Role that was chosen there.
type PersonForm struct {
	Username string
	Role     string
	Email    string
	Error    string
	Field    string
	Target   string
	// TargetRole is the role the refused role form chose.
	TargetRole string
}

// People is the people page: every person, the add form, and a secret made by the form just
// sent.
type People struct {
	Rows   []PersonRow
	Roles  []string
	MFA    bool
	Form   PersonForm
	Secret *Secret
	Now    time.Time
}

// RoleIn is the role the row of username shows chosen: the one its refused form chose, else
// current.
func (p People) RoleIn(username, current string) string {
	if p.Form.Target == username && p.Form.TargetRole != "" {
		return p.Form.TargetRole
	}
	return current
}

// TokenRow is one service account on the tokens page.
type TokenRow struct {
	Name     string
	Scopes   []string
	Created  time.Time
	LastUsed time.Time
	Expires  time.Time
	Disabled bool
}

// State is the account's state in words: Revoked, Expired or Active.
func (r TokenRow) State(now time.Time) string {
	switch {
	case r.Disabled:
		return "Revoked"
	case !r.Expires.IsZero() && !now.Before(r.Expires):
		return "Expired"
	}
	return "Active"
}

// TokenForm is the create form as typed (Scopes ticked) and the error of the form that was
// refused: Field the input it concerns ("name", "scopes", "expires"), Target the account a
// row's form was about.
type TokenForm struct {
	Name    string
	Scopes  []string
	Expires string
	Error   string
	Field   string
	Target  string
}

// Ticked reports whether scope is ticked in the form.
func (f TokenForm) Ticked(scope string) bool { return slices.Contains(f.Scopes, scope) }

// Tokens is the tokens page: every service account, the create form, and a token made by the
// form just sent.
type Tokens struct {
	Rows      []TokenRow
	AllScopes []string
	Form      TokenForm
	Secret    *Secret
	Now       time.Time
}

// personFieldError is the form's error when it concerns the add form's field.
func personFieldError(f PersonForm, field string) string {
	if f.Target == "" && f.Field == field {
		return f.Error
	}
	return ""
}

// personErrorTarget is the id the error summary links to: the add form's field, or the row of
// the person a refused action was about.
func personErrorTarget(f PersonForm) string {
	if f.Target != "" {
		return "person-" + f.Target
	}
	if f.Field == "" {
		return "add-username"
	}
	return "add-" + f.Field
}

// tokenFieldError is the form's error when it concerns the create form's field.
func tokenFieldError(f TokenForm, field string) string {
	if f.Target == "" && f.Field == field {
		return f.Error
	}
	return ""
}

// tokenErrorTarget is the id the error summary links to, like personErrorTarget.
func tokenErrorTarget(f TokenForm) string {
	if f.Target != "" {
		return "token-" + f.Target
	}
	if f.Field == "" {
		return "create-name"
	}
	return "create-" + f.Field
}
