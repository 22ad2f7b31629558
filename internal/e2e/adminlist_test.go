package e2e

import (
	"slices"
	"testing"
)

// TestAdminLists: the admin lists the accounts, an account's companies
// and its API keys through the API (SPEC 13), page by page like every
// list, and an API key is listed without the key itself.
func TestAdminLists(t *testing.T) {
	ts := startService(t, "")
	var accounts []string
	for _, name := range []string{"Acme", "Bravo", "Cierzo"} {
		accounts = append([]string{ts.newAccount(name, "", "").accountID}, accounts...)
	}
	acme := accounts[len(accounts)-1]
	var managed object
	ts.must(201, "POST", "/v1/accounts", adminKey, object{"name": "Client", "provisioned_by": acme}, &managed)
	accounts = append([]string{managed["id"].(string)}, accounts...)
	if got := ids(ts.walk("/v1/accounts", adminKey, 2, nil), "id"); !slices.Equal(got, accounts) {
		t.Errorf("GET /v1/accounts: got %v, want every account newest first %v", got, accounts)
	}

	a := "/v1/accounts/" + acme
	var companies []string
	for _, nif := range []string{"B12345674", "A58818501", "12345678Z"} {
		var c object
		ts.must(201, "POST", "/v1/companies", adminKey, object{"account_id": acme, "nif": nif, "name": "Acme " + nif}, &c)
		companies = append([]string{c["id"].(string)}, companies...)
	}
	ts.must(201, "POST", "/v1/companies", adminKey, object{"account_id": managed["id"], "nif": "X1234567L", "name": "Client SL"}, nil)
	if got := ids(ts.walk(a+"/companies", adminKey, 2, nil), "id"); !slices.Equal(got, companies) {
		t.Errorf("GET %s/companies: got %v, want the account's companies newest first %v", a, got, companies)
	}

	// newAccount made one key; two more, and one of the three revoked.
	var k2, k3 object
	ts.must(201, "POST", a+"/api_keys", adminKey, nil, &k2)
	ts.must(201, "POST", a+"/api_keys", adminKey, nil, &k3)
	ts.must(204, "DELETE", a+"/api_keys/"+k2["id"].(string), adminKey, nil, nil)
	keys := ts.walk(a+"/api_keys", adminKey, 1, nil)
	if len(keys) != 2 || keys[0]["id"] != k3["id"] {
		t.Fatalf("GET %s/api_keys: got %v, want the 2 keys not revoked, newest (%s) first", a, keys, k3["id"])
	}
	for _, k := range keys {
		if _, ok := k["key"]; ok || k["object"] != "api_key" || k["account_id"] != acme {
			t.Errorf("listed key %v: want an api_key of %s without its key", k, acme)
		}
	}
}
