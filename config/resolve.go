package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"mnemo/engine/curate"
	"mnemo/engine/postgres"
	"mnemo/storeopen"
)

// Where a value came from: Setting.Source is one of these, with the flag's,
// variable's or file's name after it ("flag --db", "env MNEMO_DB",
// "config file /home/me/.config/mnemo/config.toml").
const (
	SourceFlag    = "flag"
	SourceEnv     = "env"
	SourceFile    = "config file"
	SourceDefault = "default"
)

// Setting is one resolved value and where it came from, as info reports it.
type Setting struct {
	Value  string `json:"value"`
	Source string `json:"source"`
}

// IsDefault tells whether nobody set the value.
func (s Setting) IsDefault() bool { return s.Source == SourceDefault }

// Flags are the global flags that name settings; "" is not given.
type Flags struct {
	DB, Remote, Config string
}

// Input is what the settings are resolved from.
type Input struct {
	Flags Flags
	// Getenv reads the environment.
	Getenv func(string) string
	// ConfigHome, DataHome and StateHome are the XDG base directories used
	// when their variable is unset or not absolute.
	ConfigHome, DataHome, StateHome string
}

// Settings are one invocation's resolved settings.
type Settings struct {
	// File is the config file's contents (empty when there is none).
	File File
	// ConfigPath is the config file read, or that would be read.
	ConfigPath Setting
	// Store is the store location: a directory or a postgres:// URL.
	Store Setting
	// Remote is the server to talk to instead of a store ("" for none).
	Remote Setting
	// Log is the file --debug writes to.
	Log Setting
	// StateDir is mnemo's state directory ($XDG_STATE_HOME/mnemo).
	StateDir string

	token       string
	tokenSource string
}

// Token is the bearer token for a server (MNEMO_TOKEN). Never print it.
func (s *Settings) Token() string { return s.token }

// Resolve reads the settings: each from its flag, else its environment
// variable, else the config file, else its default. A config file named by
// --config must exist; the default one may not.
func Resolve(in Input) (*Settings, error) {
	getenv := in.Getenv
	s := &Settings{}
	xdg := func(env, fallback string) (string, string) {
		if v := getenv(env); v != "" && filepath.IsAbs(v) {
			return v, SourceEnv + " " + env
		}
		return fallback, SourceDefault
	}
	if in.Flags.Config != "" {
		s.ConfigPath = Setting{in.Flags.Config, SourceFlag + " --config"}
	} else {
		dir, src := xdg("XDG_CONFIG_HOME", in.ConfigHome)
		s.ConfigPath = Setting{filepath.Join(dir, "mnemo", "config.toml"), src}
	}
	file, err := Load(s.ConfigPath.Value, in.Flags.Config != "")
	if err != nil {
		return nil, err
	}
	s.File = file
	fromFile := SourceFile + " " + s.ConfigPath.Value
	state, stateSrc := xdg("XDG_STATE_HOME", in.StateHome)
	s.StateDir = filepath.Join(state, "mnemo")
	s.Log = Setting{filepath.Join(s.StateDir, "mnemo.log"), stateSrc}

	switch {
	case in.Flags.DB != "":
		s.Store = Setting{in.Flags.DB, SourceFlag + " --db"}
	case getenv("MNEMO_DB") != "":
		s.Store = Setting{getenv("MNEMO_DB"), SourceEnv + " MNEMO_DB"}
	case file.DB != "":
		loc := file.DB
		if !postgres.IsURL(loc) {
			loc = storeopen.ExpandHome(loc)
		}
		s.Store = Setting{loc, fromFile}
	case file.Store != "":
		s.Store = Setting{storeopen.ExpandHome(file.Store), fromFile}
	default:
		dir, src := xdg("XDG_DATA_HOME", in.DataHome)
		s.Store = Setting{filepath.Join(dir, "mnemo"), src}
	}

	switch {
	case in.Flags.Remote != "":
		s.Remote = Setting{in.Flags.Remote, SourceFlag + " --remote"}
	case getenv("MNEMO_REMOTE") != "":
		s.Remote = Setting{getenv("MNEMO_REMOTE"), SourceEnv + " MNEMO_REMOTE"}
	case file.Remote != "":
		s.Remote = Setting{file.Remote, fromFile}
	default:
		s.Remote = Setting{"", SourceDefault}
	}

	if t := getenv("MNEMO_TOKEN"); t != "" {
		s.token, s.tokenSource = t, SourceEnv+" MNEMO_TOKEN"
	}
	return s, nil
}

// secretShown stands for a secret that is set: its value is never shown.
const secretShown = "(set, not shown)"

// Report is every setting by its key with where it came from, for info:
// the store, remote, token, config file, log, and each key the config file
// sets. No secret is in it: the token is only said to be set, and a password
// in a URL is masked.
func (s *Settings) Report() map[string]Setting {
	out := map[string]Setting{
		"config": s.ConfigPath,
		"store":  redacted(s.Store),
		"remote": redacted(s.Remote),
		"log":    s.Log,
		"token":  {"", SourceDefault},
	}
	if s.token != "" {
		out["token"] = Setting{secretShown, s.tokenSource}
	}
	f, fromFile := s.File, SourceFile+" "+s.ConfigPath.Value
	set := func(key, value string) {
		if value != "" {
			out[key] = Setting{value, fromFile}
		}
	}
	out["theme"] = Setting{ThemeDefault, SourceDefault}
	set("theme", f.Theme)
	out["mouse"] = Setting{"false", SourceDefault}
	if f.Mouse != nil {
		set("mouse", fmt.Sprint(*f.Mouse))
	}
	for _, ep := range []struct {
		table string
		e     Endpoint
	}{{"embedder", f.Embedder}, {"answer", f.Answer}} {
		set(ep.table+".endpoint", postgres.Redact(ep.e.Endpoint))
		set(ep.table+".model", ep.e.Model)
		// The name of the variable that holds the key, never the key.
		set(ep.table+".api_key_env", ep.e.APIKeyEnv)
	}
	if len(f.Keys) > 0 {
		actions := make([]string, 0, len(f.Keys))
		for a := range f.Keys {
			actions = append(actions, a)
		}
		slices.Sort(actions)
		set("keys", strings.Join(actions, ", "))
	}
	if c := f.CurateConfig(); c != curate.DefaultConfig() {
		set("curate", fmt.Sprintf("%+v", c))
	}
	return out
}

// redacted masks a password in a URL value.
func redacted(s Setting) Setting {
	if strings.Contains(s.Value, "://") {
		s.Value = postgres.Redact(s.Value)
	}
	return s
}

// NonDefault is the report's keys whose value somebody set, sorted: what
// info's human form lists.
func NonDefault(report map[string]Setting) []string {
	var keys []string
	for k, v := range report {
		if !v.IsDefault() {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
