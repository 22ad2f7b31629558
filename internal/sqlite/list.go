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
// index on (<filter columns>, created, id) serves without sorting.
type listQuery struct {
	table string
	cols  string
	where []string
	args  []any
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
// page continues after that item's (created, id), so items created meanwhile
// never shift a page and every item is listed exactly once.
func list[T any](ctx context.Context, db querier, q listQuery, p webhooks.Page, scan func(scanner) (T, error)) (*webhooks.List[T], error) {
	where, args := append([]string(nil), q.where...), append([]any(nil), q.args...)
	if p.StartingAfter != "" {
		cw, ca := q.where, q.args
		if q.scopeLen > 0 {
			cw, ca = q.where[:q.scopeLen], q.args[:q.scopeArgs]
		}
		var created int64
		err := db.QueryRowContext(ctx, `SELECT created FROM `+q.table+` WHERE `+strings.Join(append([]string{"id = ?"}, cw...), " AND "),
			append([]any{dbID(p.StartingAfter)}, ca...)...).Scan(&created)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, webhooks.Errorf(webhooks.EINVALID, "starting_after %s is not an item of this list.", p.StartingAfter)
		} else if err != nil {
			return nil, err
		}
		where = append(where, "(created, id) < (?, ?)")
		args = append(args, created, dbID(p.StartingAfter))
	}
	args = append(args, p.Limit+1)
	items, err := queryAll(ctx, db, scan, `SELECT `+q.cols+` FROM `+q.table+` WHERE `+strings.Join(where, " AND ")+
		` ORDER BY created DESC, id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, err
	}
	return webhooks.PageOf(items, p.Limit), nil
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
