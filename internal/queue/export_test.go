package queue

import "context"

// CommitGroup registers regs as one group, as the registrar's committer
// does with the registrations waiting together, each with its caller's
// context, and returns each one's error.
func CommitGroup(r *Registrar, ctxs []context.Context, regs []Registration) []error {
	group := make([]*registration, len(regs))
	for i, reg := range regs {
		group[i] = &registration{ctx: ctxs[i], Registration: reg}
	}
	r.commitGroup(group)
	errs := make([]error, len(group))
	for i, g := range group {
		errs[i] = g.err
	}
	return errs
}
