// Package auth is who may do what in serve mode: principals read from a TOML
// keys file (name, role, optional reach, SSH keys, bearer-token hashes), the
// owner principal of a running server, and Confine, the engine wrapper that
// binds every request to its principal's reach and role and appends every
// mutation and every refusal to an audit log.
//
// The reach is never taken from a request: a request's reach is narrowed by the
// principal's bound (the namespaces both admit), for reads and forgets alike,
// so no request JSON can widen what a principal sees or removes, and the bound
// never replaces what a request asked for.
package auth

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
	gossh "golang.org/x/crypto/ssh"

	"mnemo/contract"
)

// Role is what a principal may do.
type Role string

// Roles, from least to most powerful.
const (
	// RoleReader reads only.
	RoleReader Role = "reader"
	// RoleCurator also stores inside its reach, forgets, reviews and supersedes.
	RoleCurator Role = "curator"
	// RoleAdmin also stores anywhere and erases.
	RoleAdmin Role = "admin"
)

// ParseRole parses a keys-file role.
func ParseRole(s string) (Role, bool) {
	switch Role(s) {
	case RoleReader, RoleCurator, RoleAdmin:
		return Role(s), true
	}
	return "", false
}

// CanWrite tells whether the role may change memory (store, forget, review, supersede).
func (r Role) CanWrite() bool { return r == RoleCurator || r == RoleAdmin }

// Principal is one identity a request or an SSH session acts as.
type Principal struct {
	Name string
	Role Role
	// Reach bounds every read and write; nil sees everything but service
	// sandboxes (the contract's "no reach").
	Reach *contract.Reach
	// Unlimited is the owner of a running server: no reach bound at all
	// (sandboxes included), requests pass through with their own reach.
	Unlimited bool
	// sshKeys are the authorized keys in wire form, for exact comparison.
	sshKeys [][]byte
	// tokenHashes are the SHA-256 digests of the accepted bearer tokens.
	tokenHashes [][sha256.Size]byte
}

// OwnerName names the owner principal in the audit log.
const OwnerName = "owner"

// Owner is the principal of the owner token: an admin with no reach limit.
func Owner() *Principal { return &Principal{Name: OwnerName, Role: RoleAdmin, Unlimited: true} }

// Bound is the reach every confined operation of p stays inside (the subtree of
// the root, sandboxes excluded, when p names no reach).
func (p *Principal) Bound() contract.Reach {
	if p.Reach == nil {
		return contract.ReachSubtree(contract.Root())
	}
	return *p.Reach
}

// Admits tells whether p may see or write items at ns.
func (p *Principal) Admits(ns contract.Namespace) bool {
	return p.Unlimited || contract.AdmittedBy(p.Reach, ns)
}

// ReadOnly tells whether p may only read.
func (p *Principal) ReadOnly() bool { return !p.Role.CanWrite() }

// Same tells whether o is p as it was (name, role and reach): a reloaded
// keys file that left a principal alone leaves its sessions and streams
// alone too.
func (p *Principal) Same(o *Principal) bool {
	if p.Name != o.Name || p.Role != o.Role || p.Unlimited != o.Unlimited || (p.Reach == nil) != (o.Reach == nil) {
		return false
	}
	if p.Reach == nil {
		return true
	}
	return p.Reach.Within(*o.Reach) && o.Reach.Within(*p.Reach)
}

// HasKey tells whether key is one of p's authorized SSH keys.
func (p *Principal) HasKey(key gossh.PublicKey) bool {
	if key == nil {
		return false
	}
	wire := key.Marshal()
	for _, k := range p.sshKeys {
		if subtle.ConstantTimeCompare(k, wire) == 1 {
			return true
		}
	}
	return false
}

// HashToken returns the SHA-256 digest of a bearer token, as keys files hold it (hex).
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Keys is a parsed keys file: every principal other than the owner. A
// running server reloads it in place (Replace), so the HTTP API and the SSH
// server, which share one *Keys, see new principals at once.
type Keys struct {
	mu         sync.RWMutex
	principals []*Principal
}

// Principals lists the principals in file order.
func (k *Keys) Principals() []*Principal {
	if k == nil {
		return nil
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	return append([]*Principal(nil), k.principals...)
}

// Replace swaps in the principals of a newly loaded file: new requests use the
// new file at once; the SSH server then checks its open sessions against it
// (ui/ssh Server.Reload).
func (k *Keys) Replace(other *Keys) {
	list := other.Principals()
	k.mu.Lock()
	k.principals = list
	k.mu.Unlock()
}

// ByToken finds the principal a bearer token belongs to. Every stored digest
// is compared in constant time, so timing tells nothing about near misses.
func (k *Keys) ByToken(token string) (*Principal, bool) {
	if k == nil || token == "" {
		return nil, false
	}
	sum := sha256.Sum256([]byte(token))
	k.mu.RLock()
	defer k.mu.RUnlock()
	var found *Principal
	for _, p := range k.principals {
		for _, h := range p.tokenHashes {
			if subtle.ConstantTimeCompare(h[:], sum[:]) == 1 && found == nil {
				found = p
			}
		}
	}
	return found, found != nil
}

// ByKey finds the principal an SSH public key belongs to.
func (k *Keys) ByKey(key gossh.PublicKey) (*Principal, bool) {
	if k == nil || key == nil {
		return nil, false
	}
	k.mu.RLock()
	defer k.mu.RUnlock()
	for _, p := range k.principals {
		if p.HasKey(key) {
			return p, true
		}
	}
	return nil, false
}

// keysFile is the TOML shape of a keys file (docs/spec/design.md section 7).
type keysFile struct {
	Principal []principalEntry `toml:"principal"`
}

type principalEntry struct {
	Name        string         `toml:"name"`
	Role        string         `toml:"role"`
	Reach       map[string]any `toml:"reach"`
	SSHKeys     []string       `toml:"ssh_keys"`
	TokenSHA256 []string       `toml:"token_sha256"`
}

// LoadKeys reads and checks a keys file. Errors name the file and the
// principal but never echo a key or a token hash.
func LoadKeys(path string) (*Keys, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, contract.ConfigErr("keys file %s does not exist", path)
		}
		return nil, contract.ConfigErr("cannot read keys file %s", path)
	}
	k, err := ParseKeys(data)
	if err != nil {
		return nil, contract.ConfigErr("keys file %s: %s", path, contract.AsError(err).Message)
	}
	return k, nil
}

// ParseKeys parses the TOML text of a keys file: names are unique and set,
// roles known, reaches in the contract Reach shape (but inherit false when
// left out), keys in authorized_keys form, token digests 64 hex digits, and no key or token serves two principals.
func ParseKeys(data []byte) (*Keys, error) {
	var f keysFile
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) {
			return nil, contract.ConfigErr("unknown setting: %s", strings.TrimSpace(firstLine(strict.String())))
		}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, contract.ConfigErr("line %d, column %d: %s", row, col, de.Error())
		}
		return nil, contract.ConfigErr("%w", err)
	}
	out := &Keys{}
	names := map[string]bool{}
	keyOwner := map[string]string{}
	tokenOwner := map[string]string{}
	for i, e := range f.Principal {
		where := fmt.Sprintf("principal %d", i+1)
		if strings.TrimSpace(e.Name) == "" {
			return nil, contract.ConfigErr("%s has no name", where)
		}
		where = fmt.Sprintf("principal `%s`", e.Name)
		if names[e.Name] || e.Name == OwnerName {
			return nil, contract.ConfigErr("%s is named twice (or takes the reserved name `owner`)", where)
		}
		names[e.Name] = true
		role, ok := ParseRole(e.Role)
		if !ok {
			return nil, contract.ConfigErr("%s: role must be reader, curator or admin, not `%s`", where, e.Role)
		}
		p := &Principal{Name: e.Name, Role: role}
		if e.Reach != nil {
			for field := range e.Reach {
				if field != "at" && field != "inherit" && field != "descendants" {
					return nil, contract.ConfigErr("%s: reach has no field `%s` (it takes at, inherit and descendants)", where, field)
				}
			}
			// A principal's reach is a bound: inherit left out means false
			// (least privilege), not the contract's default true, which
			// would let it read every ancestor up to the root.
			if _, set := e.Reach["inherit"]; !set {
				e.Reach["inherit"] = false
			}
			raw, err := json.Marshal(e.Reach)
			if err != nil {
				return nil, contract.ConfigErr("%s: reach: %w", where, err)
			}
			var r contract.Reach
			if err := json.Unmarshal(raw, &r); err != nil {
				return nil, contract.ConfigErr("%s: reach: %s", where, contract.AsError(err).Message)
			}
			p.Reach = &r
		}
		for j, line := range e.SSHKeys {
			key, _, _, _, err := gossh.ParseAuthorizedKey([]byte(line))
			if err != nil {
				return nil, contract.ConfigErr("%s: ssh key %d is not in authorized_keys form", where, j+1)
			}
			fp := gossh.FingerprintSHA256(key)
			if other, dup := keyOwner[fp]; dup {
				return nil, contract.ConfigErr("%s: ssh key %d (%s) already belongs to `%s`", where, j+1, fp, other)
			}
			keyOwner[fp] = e.Name
			p.sshKeys = append(p.sshKeys, key.Marshal())
		}
		for j, h := range e.TokenSHA256 {
			h = strings.ToLower(strings.TrimSpace(h))
			raw, err := hex.DecodeString(h)
			if err != nil || len(raw) != sha256.Size {
				return nil, contract.ConfigErr("%s: token_sha256 %d must be 64 hex digits (the SHA-256 of the token)", where, j+1)
			}
			if other, dup := tokenOwner[h]; dup {
				return nil, contract.ConfigErr("%s: token_sha256 %d already belongs to `%s`", where, j+1, other)
			}
			tokenOwner[h] = e.Name
			var d [sha256.Size]byte
			copy(d[:], raw)
			p.tokenHashes = append(p.tokenHashes, d)
		}
		out.principals = append(out.principals, p)
	}
	return out, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// DescribeReach says in words which namespaces r admits, for refusals and
// for `mnemo serve`'s account of its principals.
func DescribeReach(r contract.Reach) string {
	s := "`" + r.At.String() + "`"
	var parts []string
	if r.Inherit && !r.At.IsRoot() {
		if nodes := r.Nodes(); !nodes[0].IsRoot() {
			parts = append(parts, "its ancestors up to `"+nodes[0].String()+"`")
		} else {
			parts = append(parts, "its ancestors")
		}
	}
	if r.Descendants {
		parts = append(parts, "everything below it but service sandboxes")
	}
	if len(parts) == 0 {
		return s + " only"
	}
	return s + " with " + strings.Join(parts, " and ")
}

// DescribeBound says in words what p's reach bound admits.
func (p *Principal) DescribeBound() string {
	switch {
	case p.Unlimited:
		return "every namespace, service sandboxes included"
	case p.Reach == nil:
		return "every namespace but service sandboxes"
	}
	return DescribeReach(*p.Reach)
}

// Account says in one line who p is and what it can read and write, for
// `mnemo serve` at start and on reload; it names no key and no token.
func (p *Principal) Account() string {
	where := p.DescribeBound()
	var does string
	switch p.Role {
	case RoleReader:
		does = "reads " + where + "; writes nothing"
	case RoleCurator:
		does = "reads, stores, forgets and reviews in " + where
	default:
		does = "reads, forgets and reviews in " + where + ", and its audit log; stores anywhere"
	}
	return fmt.Sprintf("%s (%s; %s, %s): %s", p.Name, p.Role,
		count(len(p.tokenHashes), "token", "tokens"), count(len(p.sshKeys), "ssh key", "ssh keys"), does)
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
