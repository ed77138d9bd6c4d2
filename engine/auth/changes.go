package auth

import (
	"context"

	"mnemo/contract"
)

// Changes reads the change feed under the principal's reach, like every read:
// the request's reach narrowed by the bound (a change outside it, a forget in
// another tenant included, is never shown). Every role may read it.
func (c *Confined) Changes(ctx context.Context, req contract.ChangesRequest) (contract.ChangesPage, error) {
	if err := req.Validate(); err != nil {
		return contract.ChangesPage{}, err
	}
	r, err := c.Scope(ctx, "changes", req.Reach)
	if err != nil {
		return contract.ChangesPage{}, err
	}
	req.Reach = r
	return c.e.Changes(ctx, req)
}
