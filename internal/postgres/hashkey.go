package postgres

// The big lists' indexes begin with a 64-bit hash of the uuid they are
// filtered by (the endpoint's history, migration 0020; the events' logs,
// 0022) and, for a type, of the type: an entry of two 8-byte columns is
// split where an ascending run of one key inserts (see 0020), and a
// narrower entry is a smaller index. A query that reads such an index
// says both the hash's equality and the column's own: two values whose
// hashes collide (one chance in 2^64 for a pair) share the index's range,
// and the second condition keeps each one's rows.

// qIDKey is the hash condition for the uuid column col and the uuid param.
func qIDKey(col, param string) string {
	return "uuid_hash_extended(" + col + ", 0) = uuid_hash_extended(" + param + "::uuid, 0)"
}

// qIDKeys is qIDKey for the uuids of the uuid[] param.
func qIDKeys(col, param string) string {
	return "uuid_hash_extended(" + col + ", 0) = ANY (ARRAY(SELECT uuid_hash_extended(k, 0) FROM unnest(" + param + "::uuid[]) k))"
}

// qTextKey is the hash condition for the text column col and the text param.
func qTextKey(col, param string) string {
	return "hashtextextended(" + col + ", 0) = hashtextextended(" + param + "::text, 0)"
}
