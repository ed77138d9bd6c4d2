package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolvePrecedence: each setting comes from its flag, else its
// environment variable, else the config file, else the default, and says so.
func TestResolvePrecedence(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	xdgConfig := filepath.Join(home, "xdg-config")
	defaultFile := filepath.Join(xdgConfig, "mnemo", "config.toml")
	namedFile := filepath.Join(home, "named.toml")
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(defaultFile, "store = \"~/from-store-key\"\nremote = \"http://file:7077\"\n")
	write(namedFile, "db = \"~/from-db-key\"\nstore = \"/ignored\"\n")

	tests := []struct {
		name       string
		flags      Flags
		env        map[string]string
		wantStore  Setting
		wantRemote Setting
		wantConfig Setting
		wantLog    Setting
	}{
		{
			name:       "defaults",
			wantStore:  Setting{"/data/mnemo", "default"},
			wantRemote: Setting{"", "default"},
			wantConfig: Setting{"/config/mnemo/config.toml", "default"},
			wantLog:    Setting{"/state/mnemo/mnemo.log", "default"},
		},
		{
			name:       "XDG variables move the defaults",
			env:        map[string]string{"XDG_DATA_HOME": "/xd", "XDG_STATE_HOME": "/xs", "XDG_CONFIG_HOME": "relative/is/ignored"},
			wantStore:  Setting{"/xd/mnemo", "env XDG_DATA_HOME"},
			wantRemote: Setting{"", "default"},
			wantConfig: Setting{"/config/mnemo/config.toml", "default"},
			wantLog:    Setting{"/xs/mnemo/mnemo.log", "env XDG_STATE_HOME"},
		},
		{
			name:       "the default config file's store and remote",
			env:        map[string]string{"XDG_CONFIG_HOME": xdgConfig},
			wantStore:  Setting{filepath.Join(home, "from-store-key"), "config file " + defaultFile},
			wantRemote: Setting{"http://file:7077", "config file " + defaultFile},
			wantConfig: Setting{defaultFile, "env XDG_CONFIG_HOME"},
			wantLog:    Setting{"/state/mnemo/mnemo.log", "default"},
		},
		{
			name:       "--config names the file; its db wins over its store",
			flags:      Flags{Config: namedFile},
			env:        map[string]string{"XDG_CONFIG_HOME": xdgConfig},
			wantStore:  Setting{filepath.Join(home, "from-db-key"), "config file " + namedFile},
			wantRemote: Setting{"", "default"},
			wantConfig: Setting{namedFile, "flag --config"},
			wantLog:    Setting{"/state/mnemo/mnemo.log", "default"},
		},
		{
			name:       "the environment wins over the file",
			env:        map[string]string{"XDG_CONFIG_HOME": xdgConfig, "MNEMO_DB": "/env-db", "MNEMO_REMOTE": "http://env:1"},
			wantStore:  Setting{"/env-db", "env MNEMO_DB"},
			wantRemote: Setting{"http://env:1", "env MNEMO_REMOTE"},
			wantConfig: Setting{defaultFile, "env XDG_CONFIG_HOME"},
			wantLog:    Setting{"/state/mnemo/mnemo.log", "default"},
		},
		{
			name:       "flags win over everything",
			flags:      Flags{DB: "postgres://u@h/db", Remote: "http://flag:2"},
			env:        map[string]string{"XDG_CONFIG_HOME": xdgConfig, "MNEMO_DB": "/env-db", "MNEMO_REMOTE": "http://env:1"},
			wantStore:  Setting{"postgres://u@h/db", "flag --db"},
			wantRemote: Setting{"http://flag:2", "flag --remote"},
			wantConfig: Setting{defaultFile, "env XDG_CONFIG_HOME"},
			wantLog:    Setting{"/state/mnemo/mnemo.log", "default"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Resolve(Input{Flags: tt.flags, Getenv: func(k string) string { return tt.env[k] },
				ConfigHome: "/config", DataHome: "/data", StateHome: "/state"})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				key       string
				got, want Setting
			}{{"store", s.Store, tt.wantStore}, {"remote", s.Remote, tt.wantRemote}, {"config", s.ConfigPath, tt.wantConfig}, {"log", s.Log, tt.wantLog}} {
				if c.got != c.want {
					t.Errorf("%s = %+v, want %+v", c.key, c.got, c.want)
				}
				if r := s.Report()[c.key]; r != c.want {
					t.Errorf("report[%s] = %+v, want %+v", c.key, r, c.want)
				}
			}
		})
	}
}

func TestResolveRefusesAMissingNamedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.toml")
	_, err := Resolve(Input{Flags: Flags{Config: path}, Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), "config file "+path+" does not exist") {
		t.Errorf("err = %v", err)
	}
}

// TestReportNeverShowsASecret: the token is only said to be set, passwords in
// the store and remote URLs and in an endpoint are masked, and an endpoint's
// key is named by its variable only.
func TestReportNeverShowsASecret(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	text := "theme = \"plain\"\nmouse = true\n[answer]\nendpoint = \"https://bob:pw-answer@api.example/v1\"\napi_key_env = \"ANSWER_KEY\"\n[keys]\nquit = [\"q\"]\n[curate]\nconflict = 0.95\n"
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"MNEMO_TOKEN": "tok-s3cret", "ANSWER_KEY": "sk-live-key",
		"MNEMO_REMOTE": "https://alice:pw-remote@mnemo.example"}
	s, err := Resolve(Input{Flags: Flags{Config: file, DB: "postgres://mnemo:pw-db@localhost/x?password=pw-q"},
		Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if s.Token() != "tok-s3cret" {
		t.Errorf("Token() = %q", s.Token())
	}
	r := s.Report()
	for k, v := range r {
		for _, secret := range []string{"s3cret", "pw-", "sk-live"} {
			if strings.Contains(v.Value, secret) {
				t.Errorf("%s shows a secret: %q", k, v.Value)
			}
		}
	}
	want := map[string]Setting{
		"token":              {"(set, not shown)", "env MNEMO_TOKEN"},
		"store":              {"postgres://mnemo:xxxxx@localhost/x?password=xxxxx", "flag --db"},
		"remote":             {"https://alice:xxxxx@mnemo.example", "env MNEMO_REMOTE"},
		"theme":              {"plain", "config file " + file},
		"mouse":              {"true", "config file " + file},
		"answer.endpoint":    {"https://bob:xxxxx@api.example/v1", "config file " + file},
		"answer.api_key_env": {"ANSWER_KEY", "config file " + file},
		"keys":               {"quit", "config file " + file},
	}
	for k, w := range want {
		if r[k] != w {
			t.Errorf("report[%s] = %+v, want %+v", k, r[k], w)
		}
	}
	if !strings.Contains(r["curate"].Value, "Conflict:0.95") {
		t.Errorf("curate = %+v", r["curate"])
	}
	got := strings.Join(NonDefault(r), " ")
	if wantKeys := "answer.api_key_env answer.endpoint config curate keys mouse remote store theme token"; got != wantKeys {
		t.Errorf("NonDefault = %q, want %q", got, wantKeys)
	}
	empty, err := Resolve(Input{Getenv: func(string) string { return "" }, ConfigHome: dir, DataHome: dir, StateHome: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := NonDefault(empty.Report()); len(got) != 0 {
		t.Errorf("nothing set, yet NonDefault = %v", got)
	}
}
