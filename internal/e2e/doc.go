// Package e2e holds the end-to-end tests: the whole service on a temporary
// SQLite file, driven through HTTP, delivering to loopback receivers.
package e2e
