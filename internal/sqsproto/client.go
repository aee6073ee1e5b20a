package sqsproto

import (
	"context"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/ec2rolecreds"
	"github.com/aws/aws-sdk-go-v2/credentials/endpointcreds"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"
)

// NewClient builds the SQS client of a connection as aws-sdk-php's
// SqsClient gets it from SqsConnector: its region, endpoint, credentials
// (static, a named provider, or the AWS SDK's default chain: environment,
// shared config and credentials files with "profile", web identity,
// the container's and the instance's roles), timeouts and retries. It does
// not connect; credentials are fetched on the first request.
func NewClient(ctx context.Context, c Config, counter *Counter) (*sqs.Client, error) {
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithHTTPClient(httpClient(c))}
	if c.Region != "" {
		opts = append(opts, awsconfig.WithRegion(c.Region))
	}
	if c.Profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(c.Profile))
	}
	if c.MaxAttempts > 0 {
		opts = append(opts, awsconfig.WithRetryMaxAttempts(c.MaxAttempts))
	}
	if c.UseFIPS {
		opts = append(opts, awsconfig.WithUseFIPSEndpoint(aws.FIPSEndpointStateEnabled))
	}
	if c.UseDualStack {
		opts = append(opts, awsconfig.WithUseDualStackEndpoint(aws.DualStackEndpointStateEnabled))
	}
	if p := credentialsProvider(c); p != nil {
		opts = append(opts, awsconfig.WithCredentialsProvider(p))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, configErr("sqsqueue: queue connection %q: the AWS SDK's configuration: %v", c.Connection, err)
	}
	if cfg.Region == "" {
		return nil, configErr("sqsqueue: queue connection %q has no region: set its \"region\" (AWS_DEFAULT_REGION), or AWS_REGION", c.Connection)
	}
	return sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		if c.Endpoint != "" {
			o.BaseEndpoint = aws.String(c.Endpoint)
		}
		if counter != nil {
			o.APIOptions = append(o.APIOptions, counter.middleware)
		}
	}), nil
}

// credentialsProvider is the provider the connector chose; nil leaves
// the AWS SDK's default chain.
func credentialsProvider(c Config) aws.CredentialsProvider {
	switch {
	case c.Provider == "anonymous":
		return aws.AnonymousCredentials{}
	case c.Provider == "instance":
		return aws.NewCredentialsCache(ec2rolecreds.New())
	case c.Provider == "ecs":
		return aws.NewCredentialsCache(endpointcreds.New(containerCredentialsURL(), func(o *endpointcreds.Options) {
			o.AuthorizationToken = os.Getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN")
			if file := os.Getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"); file != "" {
				o.AuthorizationTokenProvider = endpointcreds.TokenProviderFunc(func() (string, error) {
					b, err := os.ReadFile(file)
					return strings.TrimSpace(string(b)), err
				})
			}
		}))
	case c.Credentials != nil:
		return credentials.NewStaticCredentialsProvider(c.Credentials.Key, c.Credentials.Secret.Reveal(), c.Credentials.Token.Reveal())
	}
	return nil
}

// containerCredentialsURL is where ECS (and EKS Pod Identity) serve the
// task's credentials, as aws-sdk-php's ecsCredentials reads it.
func containerCredentialsURL() string {
	if full := os.Getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI"); full != "" {
		return full
	}
	return "http://169.254.170.2" + os.Getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
}

// httpClient has the connection's timeouts ("http.timeout" bounds a whole
// request, "http.connect_timeout" its connect).
func httpClient(c Config) *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().
		WithTimeout(c.HTTPTimeout).
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = c.ConnectTimeout }).
		WithTransportOptions(func(t *http.Transport) { t.MaxIdleConnsPerHost = 64 })
}

// Counter counts the SQS requests a client sent, by action (the bill on
// AWS is per request). Safe for concurrent use.
type Counter struct {
	mu sync.Mutex
	by map[string]*atomic.Int64
}

// Add counts one request of action.
func (c *Counter) Add(action string) {
	c.mu.Lock()
	if c.by == nil {
		c.by = map[string]*atomic.Int64{}
	}
	n, ok := c.by[action]
	if !ok {
		n = &atomic.Int64{}
		c.by[action] = n
	}
	c.mu.Unlock()
	n.Add(1)
}

// Counts are the requests sent so far, by action ("ReceiveMessage"...).
func (c *Counter) Counts() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(c.by))
	for k, v := range c.by {
		out[k] = v.Load()
	}
	return out
}

// Total is every request sent so far.
func (c *Counter) Total() int64 {
	var n int64
	for _, v := range c.Counts() {
		n += v
	}
	return n
}

// middleware counts every attempt of every request (retries too: each
// is billed).
func (c *Counter) middleware(stack *middleware.Stack) error {
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("laraworkerRequestCounter",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			c.Add(awsmiddleware.GetOperationName(ctx))
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
}
