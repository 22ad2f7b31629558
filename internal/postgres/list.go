package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/factuarea/webhooks"
)

// listQuery describes one list: newest first by (created, id), which an
// index on (<filter columns>, created, id) serves without sorting.
type listQuery struct {
	table string
	// cursorTable, when set, is where the cursor's item is looked up
	// (table otherwise): a table with the item's created, which holds it
	// whatever filters it left since.
	cursorTable string
	cols        string
	conds       []string
	args        []any
	// none is set when a filter names an id that cannot exist: the list is
	// empty without asking the database (which would refuse to parse it).
	none bool
	// scopeLen and scopeArgs, when set (by scoped), are how many of the first conds and args say which
	// list an item is in (an endpoint's, a company's): the cursor's item
	// must be in the list, but may have left the filters after them since
	// (a delivery no longer pending, an endpoint deleted).
	scopeLen  int
	scopeArgs int
}

// scoped marks the conditions so far as the list's scope.
func (q *listQuery) scoped() {
	q.scopeLen, q.scopeArgs = len(q.conds), len(q.args)
}

// where adds a condition; format has one %d, the argument's number.
func (q *listQuery) where(format string, arg any) {
	q.args = append(q.args, arg)
	q.conds = append(q.conds, fmt.Sprintf(format, len(q.args)))
}

// whereID adds col = id for a uuid column.
func (q *listQuery) whereID(col, id string) {
	if !webhooks.ValidID(id) {
		q.none = true
		return
	}
	q.where(col+" = $%d", id)
}

// list returns one page. The cursor is the id of the last item seen; the
// page continues after that item's (created, id), so items created meanwhile
// never shift a page and every item is listed exactly once.
func list[T any](ctx context.Context, db querier, q listQuery, p webhooks.Page, scan func(scanner) (T, error)) (*webhooks.List[T], error) {
	out := &webhooks.List[T]{Data: []T{}}
	badCursor := func() error {
		return webhooks.Errorf(webhooks.EINVALID, "starting_after %s is not an item of this list.", p.StartingAfter)
	}
	if p.StartingAfter != "" {
		if q.none || !webhooks.ValidID(p.StartingAfter) {
			return nil, badCursor()
		}
		cc, ca := q.conds, q.args
		if q.scopeLen > 0 {
			cc, ca = q.conds[:q.scopeLen], q.args[:q.scopeArgs]
		}
		var created pgtype.Timestamptz
		args := append(append([]any(nil), ca...), p.StartingAfter)
		from := q.table
		if q.cursorTable != "" {
			from = q.cursorTable
		}
		err := db.QueryRow(ctx, fmt.Sprintf(`SELECT created FROM `+from+` WHERE id = $%d`, len(args))+and(cc), args...).Scan(&created)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, badCursor()
		} else if err != nil {
			return nil, err
		}
		q.args = append(q.args, created, p.StartingAfter)
		q.conds = append(q.conds, fmt.Sprintf("(created, id) < ($%d, $%d)", len(q.args)-1, len(q.args)))
	}
	if q.none {
		return out, nil
	}
	q.args = append(q.args, p.Limit+1)
	items, err := queryAll(ctx, db, scan, `SELECT `+q.cols+` FROM `+q.table+` WHERE true`+and(q.conds)+
		fmt.Sprintf(` ORDER BY created DESC, id DESC LIMIT $%d`, len(q.args)), q.args...)
	if err != nil {
		return nil, err
	}
	return webhooks.PageOf(items, p.Limit), nil
}

// and joins conditions as " AND c1 AND c2".
func and(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return " AND " + strings.Join(conds, " AND ")
}

// queryAll returns every row of query.
func queryAll[T any](ctx context.Context, db querier, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (T, error) { return scan(r) })
}
