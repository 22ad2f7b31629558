package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/factuarea/webhooks/receiver"
)

// createEffects is the customer's own table, in portable SQL. It has no
// unique key on purpose: an effect that ran twice shows as two rows.
const createEffects = `CREATE TABLE IF NOT EXISTS webhook_effects (
  event_id             VARCHAR(64)  NOT NULL,
  type                 VARCHAR(200) NOT NULL,
  api_version          VARCHAR(20)  NOT NULL,
  account_relationship VARCHAR(10),
  object_id            VARCHAR(64)
)`

// errFail is the handler's error for an object with "fail": true, which the
// test sends to see that the kit rolls back the effect and answers 500.
var errFail = errors.New("data.object.fail is true")

// recordEffect is the customer's handler: one row per event, written through
// the kit's transaction so that it commits with the record of the event id.
func recordEffect(d receiver.Dialect) receiver.HandleFunc {
	insert := `INSERT INTO webhook_effects (event_id, type, api_version, account_relationship, object_id) VALUES (?, ?, ?, ?, ?)`
	if d == receiver.Postgres {
		insert = `INSERT INTO webhook_effects (event_id, type, api_version, account_relationship, object_id) VALUES ($1, $2, $3, $4, $5)`
	}
	return func(ctx context.Context, tx *sql.Tx, ev *receiver.Event) error {
		var obj struct {
			ID   any `json:"id"`
			Fail any `json:"fail"`
		}
		if len(ev.Data.Object) > 0 {
			if err := ev.DecodeObject(&obj); err != nil {
				return err
			}
		}
		var objectID sql.NullString
		if obj.ID != nil {
			objectID = sql.NullString{String: fmt.Sprint(obj.ID), Valid: true}
		}
		relationship := sql.NullString{String: ev.AccountRelationship, Valid: ev.AccountRelationship != ""}
		if _, err := tx.ExecContext(ctx, insert, ev.ID, ev.Type, ev.APIVersion, relationship, objectID); err != nil {
			return fmt.Errorf("insert into webhook_effects: %w", err)
		}
		if obj.Fail == true {
			return errFail
		}
		return nil
	}
}
