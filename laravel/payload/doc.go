// Package payload reads and writes what Laravel stores in jobs.payload and
// failed_jobs.payload: the JSON envelope, the PHP-serialized command inside it
// (optionally encrypted with Laravel's Encrypter), the Laravel values found in
// commands (Eloquent model identifiers, closures, chains), and payloads built
// as Laravel's dispatch builds them.
//
// The PHP serialize() codec itself (the value tree, Unserialize, Serialize,
// Decode) is package phpserialize.
package payload
