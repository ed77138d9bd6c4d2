package postgres_test

import (
	neturl "net/url"
	"strings"
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
	if pw != "" && (strings.Contains(u.User.Username(), pw) || strings.Contains(u.Host+u.Path, pw)) {
		// A password that is also the role's or the database's name shows
		// wherever they do: nothing to look for.
		return ""
	}
	return pw
}
