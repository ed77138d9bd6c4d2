package ssh

import (
	"context"

	"mnemo/contract"
)

// Changes reads the change feed; a waiting read ends with the session.
func (s *sessionEngine) Changes(ctx context.Context, req contract.ChangesRequest) (contract.ChangesPage, error) {
	ctx, done, err := s.read(ctx)
	if err != nil {
		return contract.ChangesPage{}, err
	}
	defer done()
	return s.engine().Changes(ctx, req)
}
