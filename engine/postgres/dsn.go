package postgres

import (
	"net"
	neturl "net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"mnemo/contract"
)

// IsURL tells whether a store location names a PostgreSQL database rather
// than a store directory.
func IsURL(loc string) bool {
	l := strings.ToLower(strings.TrimSpace(loc))
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// masked replaces a password wherever it is printed.
const masked = "xxxxx"

// Redact returns the URL with any password (in the user info or a password
// query parameter) masked, for labels, logs and errors. A URL that does not
// parse is reduced to its scheme, so a malformed one cannot leak either.
func Redact(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil {
		if i := strings.Index(raw, "://"); i >= 0 {
			return raw[:i+3] + "…"
		}
		return "…"
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = neturl.UserPassword(u.User.Username(), masked)
		}
	}
	q := u.Query()
	changed := false
	for k := range q {
		if strings.EqualFold(k, "password") {
			q.Set(k, masked)
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// parseConfig reads a store URL into a pool configuration. A `schema`
// parameter is mnemo's shorthand for `search_path`; the store's tables live in
// the first schema of the search path (created when missing). The returned
// schema is empty when the URL names none (the server's default applies).
func parseConfig(raw string) (*pgxpool.Config, string, error) {
	u, err := neturl.Parse(raw)
	if err != nil || !IsURL(raw) {
		return nil, "", contract.ConfigErr("%s is not a postgres:// URL", Redact(raw))
	}
	q := u.Query()
	schema := ""
	for k, v := range q {
		if strings.EqualFold(k, "schema") {
			schema = v[len(v)-1]
			q.Del(k)
		}
	}
	if schema != "" {
		q.Set("search_path", schema)
	}
	u.RawQuery = q.Encode()
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		// pgx's parse errors may quote the URL; say only what is wrong.
		return nil, "", contract.ConfigErr("cannot read the database URL %s: %s", Redact(raw), scrub(err.Error(), raw))
	}
	if sp, ok := cfg.ConnConfig.RuntimeParams["search_path"]; ok {
		schema = firstSchema(sp)
	}
	return cfg, schema, nil
}

// firstSchema is the first entry of a search_path, unquoted.
func firstSchema(sp string) string {
	first, _, _ := strings.Cut(sp, ",")
	first = strings.TrimSpace(first)
	if len(first) >= 2 && first[0] == '"' && first[len(first)-1] == '"' {
		return strings.ReplaceAll(first[1:len(first)-1], `""`, `"`)
	}
	return first
}

// scrub removes a URL's password from a message that might quote it.
func scrub(msg, raw string) string {
	if u, err := neturl.Parse(raw); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, masked)
			msg = strings.ReplaceAll(msg, neturl.QueryEscape(pw), masked)
		}
	}
	return strings.ReplaceAll(msg, raw, Redact(raw))
}

// hostLabel names the database server for messages: host:port, or the socket
// directory for a Unix socket, and the database name.
func hostLabel(cfg *pgxpool.Config) string {
	c := cfg.ConnConfig
	host := c.Host
	if strings.HasPrefix(host, "/") {
		host = "socket " + host
	} else {
		host = net.JoinHostPort(host, strconv.Itoa(int(c.Port)))
	}
	if c.Database != "" {
		return host + " database " + c.Database
	}
	return host
}
