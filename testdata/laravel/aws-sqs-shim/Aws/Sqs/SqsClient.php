<?php

namespace Aws\Sqs;

use Aws\Result;
use RuntimeException;

/**
 * A stand-in for aws-sdk-php's SqsClient (tests only, see ../../README.md):
 * every call is the SQS request of that name in SQS's JSON protocol, sent
 * to the connection's endpoint over one kept-alive curl handle.
 */
class SqsClient
{
    private $endpoint;

    private $curl;

    /** How many requests each action sent (the tests count them). */
    public static $requests = [];

    public function __construct(array $args)
    {
        if (empty($args['endpoint'])) {
            throw new RuntimeException('the test stand-in for Aws\Sqs\SqsClient talks to a local SQS server only: set the connection\'s endpoint');
        }
        $this->endpoint = rtrim($args['endpoint'], '/').'/';
    }

    public function __call($name, $arguments)
    {
        return $this->request(ucfirst($name), $arguments[0] ?? []);
    }

    private function request(string $action, array $params): Result
    {
        if ($this->curl === null) {
            $this->curl = curl_init();
        }
        self::$requests[$action] = (self::$requests[$action] ?? 0) + 1;
        curl_setopt_array($this->curl, [
            CURLOPT_URL => $this->endpoint,
            CURLOPT_POST => true,
            CURLOPT_POSTFIELDS => json_encode((object) $params, JSON_UNESCAPED_SLASHES),
            CURLOPT_HTTPHEADER => ['Content-Type: application/x-amz-json-1.0', 'X-Amz-Target: AmazonSQS.'.$action],
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_TIMEOUT => 60,
        ]);
        $body = curl_exec($this->curl);
        if ($body === false) {
            throw new RuntimeException("SQS {$action}: ".curl_error($this->curl));
        }
        $status = curl_getinfo($this->curl, CURLINFO_RESPONSE_CODE);
        $data = $body === '' ? [] : json_decode($body, true);
        if ($status !== 200) {
            throw new RuntimeException("SQS {$action} failed ({$status}): {$body}");
        }

        return new Result(is_array($data) ? $data : []);
    }
}
