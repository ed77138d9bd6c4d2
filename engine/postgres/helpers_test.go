package postgres_test

import (
	neturl "net/url"
	"testing"
)

func withPassword(t *testing.T, raw, pw string) string {
	t.Helper()
	u, err := neturl.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	name := "mnemo"
	if u.User != nil {
		name = u.User.Username()
	}
	u.User = neturl.UserPassword(name, pw)
	return u.String()
}

func passwordOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := neturl.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return pw
}
