package main

import (
	"context"

	"mnemo/engine/postgres"
	"mnemo/engine/retrieval"
)

// openPostgres opens the PostgreSQL store a postgres:// URL names. Its label
// is the URL with the password masked, so info, logs and errors never show it.
func openPostgres(ctx context.Context, a *app, url string) (*openStore, error) {
	opts := postgres.Options{Logger: a.logger}
	if ep := a.cfg.Answer; ep.Endpoint != "" {
		ans, err := retrieval.NewOpenAIChat(retrieval.ChatConfig{Endpoint: ep.Endpoint, Model: ep.Model, APIKeyEnv: ep.APIKeyEnv}, nil)
		if err != nil {
			return nil, err
		}
		opts.Answerer = ans
	}
	e, err := postgres.Open(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	a.logger.Debug("opened the store", "url", e.Label())
	return &openStore{
		engine:      e,
		label:       e.Label(),
		recordCount: e.Len,
		close:       e.Close,
	}, nil
}
