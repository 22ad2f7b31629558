package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/factuarea/webhooks"
)

// The documents are read and written as text, so that they come back as
// the admin gave them (json keeps the text) whatever pgx makes of json.
const eventTypeCols = `name, description, example::text, schema::text, archived, created, updated`

func scanEventType(r scanner) (*webhooks.EventType, error) {
	var t webhooks.EventType
	var example, schema pgtype.Text
	var created, updated pgtype.Timestamptz
	if err := r.Scan(&t.Name, &t.Description, &example, &schema, &t.Archived, &created, &updated); err != nil {
		return nil, err
	}
	t.Example, t.Schema = jsonOrNil(example), jsonOrNil(schema)
	t.Created, t.Updated = fromTS(created), fromTS(updated)
	return &t, nil
}

func jsonOrNil(t pgtype.Text) []byte {
	if !t.Valid {
		return nil
	}
	return []byte(t.String)
}

func findEventType(ctx context.Context, q querier, name string) (*webhooks.EventType, error) {
	t, err := scanEventType(q.QueryRow(ctx, `SELECT `+eventTypeCols+` FROM event_types WHERE name = $1`, name))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("event type")
	}
	return t, err
}

// FindEventType implements driver.Store.
func (s *Store) FindEventType(ctx context.Context, name string) (*webhooks.EventType, error) {
	return read(findEventType(ctx, s.pool, name))
}

// Catalog implements driver.Store: one statement, so one snapshot of the
// version and the types.
func (s *Store) Catalog(ctx context.Context) (int64, []*webhooks.EventType, error) {
	rows, err := s.pool.Query(ctx, `SELECT v.version, t.name, t.description, t.example::text, t.schema::text, t.archived, t.created, t.updated
		FROM catalog_version v LEFT JOIN event_types t ON true ORDER BY t.name`)
	if err != nil {
		return 0, nil, txError(err)
	}
	defer rows.Close()
	var version int64
	var types []*webhooks.EventType
	for rows.Next() {
		var name, description, example, schema pgtype.Text
		var archived pgtype.Bool
		var created, updated pgtype.Timestamptz
		if err := rows.Scan(&version, &name, &description, &example, &schema, &archived, &created, &updated); err != nil {
			return 0, nil, txError(err)
		}
		if !name.Valid {
			continue // the catalog is empty
		}
		types = append(types, &webhooks.EventType{
			Name: name.String, Description: description.String, Example: jsonOrNil(example), Schema: jsonOrNil(schema),
			Archived: archived.Bool, Created: fromTS(created), Updated: fromTS(updated),
		})
	}
	return version, types, txError(rows.Err())
}

// ListEventTypes implements driver.Store.
func (s *Store) ListEventTypes(ctx context.Context, p webhooks.Page) (*webhooks.List[*webhooks.EventType], error) {
	if p.StartingAfter != "" {
		if _, err := findEventType(ctx, s.pool, p.StartingAfter); webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
			return nil, webhooks.Errorf(webhooks.EINVALID, "starting_after %s is not an event type of the catalog.", p.StartingAfter)
		} else if err != nil {
			return nil, txError(err)
		}
	}
	items, err := queryAll(ctx, s.pool, scanEventType, `SELECT `+eventTypeCols+` FROM event_types WHERE name > $1 ORDER BY name LIMIT $2`,
		p.StartingAfter, p.Limit+1)
	if err != nil {
		return nil, txError(err)
	}
	return webhooks.PageOf(items, p.Limit), nil
}

// qRegistrationStart is a group of registrations' first statement: it
// sets the transaction's plans (see hotPathSettings) and takes the
// catalog's lock, shared with the other registrations and exclusive of
// LockCatalog, so that a change of the catalog commits before the group
// reads the catalog's version, or after the group commits. The group's
// read of routing_version (see qVersions) then reads the catalog's beside
// it: no statement more per group. The lock is per schema, as the tables
// are.
const qRegistrationStart = `SELECT ` + hotPathSettings + `, pg_advisory_xact_lock_shared($1, hashtext(current_schema()))`

// LockCatalog implements driver.Tx: the catalog's lock, exclusive.
func (t *txn) LockCatalog(ctx context.Context) error {
	_, err := t.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))`, lockCatalog)
	return err
}

// FindEventType implements driver.Tx.
func (t *txn) FindEventType(ctx context.Context, name string) (*webhooks.EventType, error) {
	return findEventType(ctx, t, name)
}

// InsertEventType implements driver.Tx.
func (t *txn) InsertEventType(ctx context.Context, et *webhooks.EventType) error {
	_, err := t.Exec(ctx, `INSERT INTO event_types (name, description, example, schema, archived, created, updated)
		VALUES ($1, $2, $3::text::json, $4::text::json, $5, $6, $7)`,
		et.Name, et.Description, nullString(string(et.Example)), nullString(string(et.Schema)), et.Archived, ts(et.Created), ts(et.Updated))
	return err
}

// UpdateEventType implements driver.Tx.
func (t *txn) UpdateEventType(ctx context.Context, et *webhooks.EventType) error {
	_, err := t.Exec(ctx, `UPDATE event_types SET description = $2, example = $3::text::json, schema = $4::text::json,
		archived = $5, created = $6, updated = $7 WHERE name = $1`,
		et.Name, et.Description, nullString(string(et.Example)), nullString(string(et.Schema)), et.Archived, ts(et.Created), ts(et.Updated))
	return err
}
