package sqlite

import (
	"context"
	"database/sql"
	"errors"

	webhooks "github.com/factuarea/webhooks"
)

const eventTypeCols = `name, description, example, schema, archived, created, updated`

func scanEventType(r scanner) (*webhooks.EventType, error) {
	var t webhooks.EventType
	var example, schema sql.NullString
	var archived int
	var created, updated sql.NullInt64
	if err := r.Scan(&t.Name, &t.Description, &example, &schema, &archived, &created, &updated); err != nil {
		return nil, err
	}
	t.Example, t.Schema = jsonOrNil(example), jsonOrNil(schema)
	t.Archived, t.Created, t.Updated = archived == 1, fromMS(created), fromMS(updated)
	return &t, nil
}

func jsonOrNil(s sql.NullString) []byte {
	if !s.Valid {
		return nil
	}
	return []byte(s.String)
}

func findEventType(ctx context.Context, q querier, name string) (*webhooks.EventType, error) {
	t, err := scanEventType(q.QueryRowContext(ctx, `SELECT `+eventTypeCols+` FROM event_types WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("event type")
	}
	return t, err
}

// FindEventType implements driver.Store.
func (s *Store) FindEventType(ctx context.Context, name string) (*webhooks.EventType, error) {
	return read(findEventType(ctx, s.read, name))
}

// Catalog implements driver.Store: one statement, so one snapshot of the
// version and the types.
func (s *Store) Catalog(ctx context.Context) (int64, []*webhooks.EventType, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT v.version, t.name, t.description, t.example, t.schema, t.archived, t.created, t.updated
		FROM catalog_version v LEFT JOIN event_types t ON 1 = 1 ORDER BY t.name`)
	if err != nil {
		return 0, nil, dbError(err)
	}
	defer rows.Close()
	var version int64
	var types []*webhooks.EventType
	for rows.Next() {
		var name, description sql.NullString
		var example, schema sql.NullString
		var archived, created, updated sql.NullInt64
		if err := rows.Scan(&version, &name, &description, &example, &schema, &archived, &created, &updated); err != nil {
			return 0, nil, dbError(err)
		}
		if !name.Valid {
			continue // the catalog is empty
		}
		types = append(types, &webhooks.EventType{
			Name: name.String, Description: description.String, Example: jsonOrNil(example), Schema: jsonOrNil(schema),
			Archived: archived.Int64 == 1, Created: fromMS(created), Updated: fromMS(updated),
		})
	}
	return version, types, dbError(rows.Err())
}

// ListEventTypes implements driver.Store.
func (s *Store) ListEventTypes(ctx context.Context, p webhooks.Page) (*webhooks.List[*webhooks.EventType], error) {
	if p.StartingAfter != "" {
		if _, err := findEventType(ctx, s.read, p.StartingAfter); webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
			return nil, webhooks.Errorf(webhooks.EINVALID, "starting_after %s is not an event type of the catalog.", p.StartingAfter)
		} else if err != nil {
			return nil, dbError(err)
		}
	}
	items, err := queryAll(ctx, s.read, scanEventType, `SELECT `+eventTypeCols+` FROM event_types WHERE name > ? ORDER BY name LIMIT ?`,
		p.StartingAfter, p.Limit+1)
	if err != nil {
		return nil, dbError(err)
	}
	return webhooks.PageOf(items, p.Limit), nil
}

// LockCatalog implements driver.Tx. The one write connection serializes every
// write transaction, registrations included: there is nothing to lock.
func (t *txn) LockCatalog(context.Context) error { return nil }

// FindEventType implements driver.Tx.
func (t *txn) FindEventType(ctx context.Context, name string) (*webhooks.EventType, error) {
	return findEventType(ctx, t, name)
}

// InsertEventType implements driver.Tx.
func (t *txn) InsertEventType(ctx context.Context, et *webhooks.EventType) error {
	_, err := t.ExecContext(ctx, `INSERT INTO event_types (`+eventTypeCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		et.Name, et.Description, nullString(string(et.Example)), nullString(string(et.Schema)), boolInt(et.Archived), ms(et.Created), ms(et.Updated))
	return err
}

// UpdateEventType implements driver.Tx.
func (t *txn) UpdateEventType(ctx context.Context, et *webhooks.EventType) error {
	_, err := t.ExecContext(ctx, `UPDATE event_types SET description = ?, example = ?, schema = ?, archived = ?, created = ?, updated = ? WHERE name = ?`,
		et.Description, nullString(string(et.Example)), nullString(string(et.Schema)), boolInt(et.Archived), ms(et.Created), ms(et.Updated), et.Name)
	return err
}
