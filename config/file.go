// Package config resolves mnemo's settings in one place: command-line flags,
// then the environment (MNEMO_DB, MNEMO_REMOTE, MNEMO_TOKEN, the XDG base
// directories), then the config file (docs/spec/cli.md section 1), then the
// defaults. It remembers where each value came from, so `mnemo info` can say
// it, and never reports a secret: a token is only said to be set, a password
// in a URL is masked.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"mnemo/contract"
	"mnemo/engine/curate"
)

// File is the config file (docs/spec/cli.md section 1, default
// $XDG_CONFIG_HOME/mnemo/config.toml). Unknown keys are errors that name the key,
// so a typo never silently falls back to a default.
type File struct {
	// Store is the store directory used when neither --db nor MNEMO_DB is set.
	Store string `toml:"store"`
	// DB is the store location, a directory or a postgres:// URL (it wins over
	// store when both are set).
	DB string `toml:"db"`
	// Remote is the server used when neither --remote nor MNEMO_REMOTE is set.
	Remote   string   `toml:"remote"`
	Embedder Endpoint `toml:"embedder"`
	Answer   Endpoint `toml:"answer"`
	// Theme is how the TUI draws: "default" (the terminal's 16 ANSI
	// colours) or "plain" (ASCII borders and glyphs, as --plain).
	Theme string `toml:"theme"`
	Mouse *bool  `toml:"mouse"`
	// Keys maps an action name to the keys bound to it (keymap.go applies it).
	Keys map[string][]string `toml:"keys"`
	// Curate holds the thresholds of curation's clusters (docs/curation.md);
	// settings left out keep their defaults.
	Curate curate.Config `toml:"curate"`
}

// CurateConfig answers the clustering thresholds: the defaults, overridden by
// the config file's [curate] table.
func (c File) CurateConfig() curate.Config {
	if c.Curate == (curate.Config{}) {
		return curate.DefaultConfig()
	}
	return c.Curate
}

// The themes the TUI draws with.
const (
	ThemeDefault = "default"
	ThemePlain   = "plain"
)

// Endpoint names an OpenAI-compatible endpoint. The key itself never
// lives in the file: APIKeyEnv names the environment variable that holds it.
type Endpoint struct {
	Endpoint  string `toml:"endpoint"`
	Model     string `toml:"model"`
	APIKeyEnv string `toml:"api_key_env"`
}

// Load reads the config file at path. A missing file is an empty config
// unless the user named it with --config.
func Load(path string, explicit bool) (File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !explicit {
			return File{}, nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			return File{}, contract.ConfigErr("config file %s does not exist", path)
		}
		return File{}, contract.ConfigErr("cannot read config file %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse decodes a config file strictly.
func Parse(path string, data []byte) (File, error) {
	cfg := File{Curate: curate.DefaultConfig()}
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return File{}, configDecodeError(path, err)
	}
	if err := cfg.validate(); err != nil {
		return File{}, contract.ConfigErr("%s: %s", path, err)
	}
	return cfg, nil
}

func configDecodeError(path string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		names := make([]string, 0, len(strict.Errors))
		for i := range strict.Errors {
			e := &strict.Errors[i]
			line, _ := e.Position()
			names = append(names, fmt.Sprintf("%q (line %d)", strings.Join(e.Key(), "."), line))
		}
		noun := "unknown key"
		if len(names) > 1 {
			noun = "unknown keys"
		}
		return contract.ConfigErr("%s: %s %s", path, noun, strings.Join(names, ", "))
	}
	var decErr *toml.DecodeError
	if errors.As(err, &decErr) {
		line, col := decErr.Position()
		msg := strings.TrimPrefix(decErr.Error(), "toml: ")
		if key := decErr.Key(); len(key) > 0 {
			return contract.ConfigErr("%s:%d:%d: %s: %s", path, line, col, strings.Join(key, "."), msg)
		}
		return contract.ConfigErr("%s:%d:%d: %s", path, line, col, msg)
	}
	return contract.ConfigErr("%s: %s", path, strings.TrimPrefix(err.Error(), "toml: "))
}

// validate checks what decoding cannot.
func (c File) validate() error {
	if err := c.CurateConfig().Validate(); err != nil {
		return fmt.Errorf("[curate] %w", err)
	}
	for _, ep := range []struct {
		table string
		cfg   Endpoint
	}{{"embedder", c.Embedder}, {"answer", c.Answer}} {
		if ep.cfg.Endpoint != "" && !strings.HasPrefix(ep.cfg.Endpoint, "http://") && !strings.HasPrefix(ep.cfg.Endpoint, "https://") {
			return fmt.Errorf("[%s] endpoint %q must be an http:// or https:// URL", ep.table, ep.cfg.Endpoint)
		}
		if ep.cfg.Endpoint == "" && (ep.cfg.Model != "" || ep.cfg.APIKeyEnv != "") {
			return fmt.Errorf("[%s] sets model or api_key_env but no endpoint", ep.table)
		}
	}
	switch c.Theme {
	case "", ThemeDefault, ThemePlain:
	default:
		return fmt.Errorf("theme %q is not a theme: %q (the terminal's 16 ANSI colours) or %q (ASCII borders and glyphs)", c.Theme, ThemeDefault, ThemePlain)
	}
	return nil
}
