package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	webhooks "github.com/factuarea/webhooks"
)

// scanner is a *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}

// listQuery describes one list: newest first by (created, id), which an
// index on (<filter columns>, created, id) serves without sorting; or, for
// the big lists, by (created, rowid), which an index on (<filter columns>,
// created) serves, every entry ending with the rowid (migration 0018).
type listQuery struct {
	table string
	cols  string
	where []string
	args  []any
	// byRowid breaks ties in created by rowid, not by id.
	byRowid bool
	// scopeLen and scopeArgs, when set (by scoped), are how many of the first where conditions and args
	// say which list an item is in (an endpoint's, a company's): the
	// cursor's item must be in the list, but may have left the filters
	// after them since (a delivery no longer pending, an endpoint deleted).
	scopeLen  int
	scopeArgs int
}

// scoped marks the conditions so far as the list's scope.
func (q *listQuery) scoped() {
	q.scopeLen, q.scopeArgs = len(q.where), len(q.args)
}

// list returns one page. The cursor is the id of the last item seen; the
// page continues after that item's (created, id), or (created, rowid), so
// items created meanwhile never shift a page and every item is listed
// exactly once.
func list[T any](ctx context.Context, db querier, q listQuery, p webhooks.Page, scan func(scanner) (T, error)) (*webhooks.List[T], error) {
	var a *after
	if p.StartingAfter != "" {
		cw, ca := q.where, q.args
		if q.scopeLen > 0 {
			cw, ca = q.where[:q.scopeLen], q.args[:q.scopeArgs]
		}
		a = &after{id: p.StartingAfter}
		err := db.QueryRowContext(ctx, `SELECT created, rowid FROM `+q.table+` WHERE `+strings.Join(append([]string{"id = ?"}, cw...), " AND "),
			append([]any{dbID(p.StartingAfter)}, ca...)...).Scan(&a.created, &a.rowid)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, webhooks.Errorf(webhooks.EINVALID, "starting_after %s is not an item of this list.", p.StartingAfter)
		} else if err != nil {
			return nil, err
		}
	}
	query, args := q.page(a, p.Limit)
	items, err := queryAll(ctx, db, scan, query, args...)
	if err != nil {
		return nil, err
	}
	return webhooks.PageOf(items, p.Limit), nil
}

// after is the item a page starts after.
type after struct {
	id             string
	created, rowid int64
}

// page returns the query of the page after a (nil: the first), with one
// item more than limit to tell whether another page follows.
func (q listQuery) page(a *after, limit int) (string, []any) {
	where, args := append([]string(nil), q.where...), append([]any(nil), q.args...)
	order := "created DESC, id DESC"
	if q.byRowid {
		order = "created DESC, rowid DESC"
	}
	switch {
	case a != nil && q.byRowid:
		where, args = append(where, "(created, rowid) < (?, ?)"), append(args, a.created, a.rowid)
	case a != nil:
		where, args = append(where, "(created, id) < (?, ?)"), append(args, a.created, dbID(a.id))
	}
	return `SELECT ` + q.cols + ` FROM ` + q.table + ` WHERE ` + strings.Join(where, " AND ") + ` ORDER BY ` + order + ` LIMIT ?`,
		append(args, limit+1)
}

// queryAll returns every row of query.
func queryAll[T any](ctx context.Context, db querier, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
