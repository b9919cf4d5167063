package agency

import "testing"

func TestSanitizeName(t *testing.T) {
	for in, want := range map[string]string{
		"feature/auth-login": "feature-auth-login",
		"fix: bug #123":      "fix-bug-123",
		"user/john/task":     "user-john-task",
		"...test":            "test",
		"Feature/Auth.Login": "feature-auth-login",
		"--a--b--":           "a-b",
		"x":                  "x",
		"":                   "",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-bbbb": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	} {
		if got := sanitizeName(in); got != want {
			t.Errorf("sanitizeName(%q) = %q, want %q", in, got, want)
		}
	}
}
