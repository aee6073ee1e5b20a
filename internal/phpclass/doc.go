// Package phpclass reads a Laravel app's job classes through the app's own
// PHP: their properties (visibility, declared types, defaults), the queue
// options they declare, the contracts and traits Laravel looks for, the
// middleware their middleware() method returns and the models they hold.
// Nothing of the app's runs beyond its boot (as `php artisan` boots it): no
// job is constructed, no payload unserialized, and method bodies are read
// as source tokens. Packages classaudit and jobgen build on what it reads.
package phpclass
