package console

import (
	"github.com/laraworker/laraworker/appconfig"
	"github.com/laraworker/laraworker/payload"
	"github.com/urfave/cli/v2"
)

// loadConfig reads the app's configuration (see loadAppConfig), with flag
// overrides keyed by their .env names.
func loadConfig(c *cli.Context, overrides map[string]string) (appconfig.Config, error) {
	cfg, _, err := loadAppConfig(c, overrides)
	return cfg, err
}

// encrypterFromFlags returns nil (and no error) when no key is configured:
// plain commands need none, encrypted ones then fail with ErrEncrypted.
func encrypterFromFlags(c *cli.Context) (*payload.Encrypter, error) {
	cfg, err := loadConfig(c, nil)
	if err != nil {
		return nil, err
	}
	return encrypterFor(cfg)
}

func encrypterFor(cfg appconfig.Config) (*payload.Encrypter, error) {
	if !cfg.AppKey.IsSet() {
		return nil, nil
	}
	key, err := payload.ParseKey(cfg.AppKey.Reveal())
	if err != nil {
		return nil, err
	}
	var previous [][]byte
	for _, pk := range cfg.AppPreviousKeys {
		k, err := payload.ParseKey(pk.Reveal())
		if err != nil {
			return nil, err
		}
		previous = append(previous, k)
	}
	cipher := cfg.AppCipher
	if cipher == "" {
		cipher = "AES-256-CBC"
	}
	return payload.NewEncrypter(key, cipher, previous...)
}
