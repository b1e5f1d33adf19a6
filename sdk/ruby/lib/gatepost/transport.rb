# frozen_string_literal: true

require "json"
require "net/http"
require "openssl"
require "time"
require "uri"
require_relative "errors"
require_relative "version"

module Gatepost
  # One HTTP request to Gatepost, with bounded retries, over net/http.
  #
  # Retried, with exponential backoff and full jitter: a 429 (after its Retry-After, when that is
  # not longer than max_retry_wait: a daily quota's wait until midnight is raised at once), a
  # connection that could not be made (nothing reached the server), and, when repeating the
  # request cannot do anything twice (GET, PATCH, DELETE, or a request with an idempotency key),
  # a 5xx and a connection lost or timed out after the request went out.
  # A request body sent as it is: a String, or an IO read from where it stands (a CSV file). An
  # IO that can seek is rewound for a retry; one that cannot (a pipe) is sent once, chunked.
  class Upload
    def initialize(content_type, data)
      raise ArgumentError, "a body is a String or an IO, not #{data.class}" unless data.is_a?(String) || data.respond_to?(:read)

      @content_type = content_type
      @data = data
      @start = data.pos if !data.is_a?(String) && seekable?(data)
    end

    def replayable? = @data.is_a?(String) || !@start.nil?

    # Itself, its IO back where it started.
    def rewound
      @data.seek(@start) unless @start.nil?
      self
    end

    def attach(request)
      request["Content-Type"] = @content_type
      return request.body = @data if @data.is_a?(String)

      request.body_stream = @data
      if @start.nil?
        request["Transfer-Encoding"] = "chunked"
      else
        request["Content-Length"] = (@data.size - @start).to_s
      end
    end

    private

    def seekable?(io)
      io.respond_to?(:seek) && io.respond_to?(:size) && io.pos && true
    rescue IOError, Errno::ESPIPE
      false
    end
  end

  class Transport
    REPEATABLE = %w[GET HEAD PATCH PUT DELETE].freeze
    # Failures before anything was sent: safe to retry whatever the request.
    NOT_SENT = [Errno::ECONNREFUSED, Net::OpenTimeout].freeze
    FAILURES = [Errno::ECONNREFUSED, Errno::ECONNRESET, Errno::EPIPE, Errno::EHOSTUNREACH, Errno::ENETUNREACH,
                Net::OpenTimeout, Net::ReadTimeout, Net::WriteTimeout, EOFError, IOError, SocketError,
                OpenSSL::SSL::SSLError].freeze
    METHODS = {
      "GET" => Net::HTTP::Get, "POST" => Net::HTTP::Post, "PATCH" => Net::HTTP::Patch, "DELETE" => Net::HTTP::Delete
    }.freeze

    # max_attempts: tries in all, the first included; backoff: the first wait, doubled each retry
    # (before jitter), up to max_backoff; max_retry_wait: the longest Retry-After honoured.
    def initialize(base_url:, api_key:, timeout:, max_attempts: 3, backoff: 0.5, max_backoff: 8.0, max_retry_wait: 60.0)
      raise ArgumentError, "max_attempts must be at least 1" if max_attempts < 1

      @base = URI(base_url.to_s.chomp("/"))
      @api_key = api_key
      @timeout = timeout
      @max_attempts = max_attempts
      @backoff = backoff
      @max_backoff = max_backoff
      @max_retry_wait = max_retry_wait
    end

    # Answers the decoded JSON body (nil for 204), or raises a Gatepost::Error. body is JSON's
    # (a Hash or an Array) or an Upload; timeout replaces the transport's for this request. A
    # download answers the Net::HTTPResponse itself: its body's bytes and its headers.
    def request(method, path, body: nil, headers: {}, timeout: @timeout, download: false)
      repeatable = REPEATABLE.include?(method) || headers.key?("Idempotency-Key")
      upload = body.is_a?(Upload) ? body : json_upload(method, body)
      # A stream read once (a pipe) cannot be sent again.
      attempts = upload.nil? || upload.replayable? ? @max_attempts : 1
      attempts.times do |attempt|
        last = attempt == attempts - 1
        begin
          res = perform(method, path, upload&.rewound, headers, timeout, download)
        rescue *FAILURES => e
          sent = NOT_SENT.none? { |klass| e.is_a?(klass) }
          if last || (sent && !repeatable)
            klass = [Net::OpenTimeout, Net::ReadTimeout, Net::WriteTimeout].any? { |k| e.is_a?(k) } ? TimeoutError : ConnectionError
            raise klass, "#{method} #{path}: #{e.class}: #{e.message}"
          end
          sleep(backoff(attempt))
          next
        end
        status = res.code.to_i
        return download ? res : decode(status, res.body) if status < 400

        wait = Transport.retry_after(res["Retry-After"])
        error = error_of(status, res.body, wait)
        honoured = !wait.nil? && wait <= @max_retry_wait
        raise error if last
        raise error unless status == 429 || (status >= 500 && repeatable)
        raise error if status == 429 && !wait.nil? && !honoured

        sleep(honoured ? wait : backoff(attempt))
      end
    end

    # Retry-After in seconds: delta-seconds or an HTTP date (RFC 9110 section 10.2.3); nil if neither.
    def self.retry_after(value)
      return nil if value.nil? || value.strip.empty?
      return Float(value.strip) if value.strip.match?(/\A\d+\z/)

      [Time.httpdate(value.strip) - Time.now, 0.0].max
    rescue ArgumentError
      nil
    end

    private

    def perform(method, path, upload, headers, timeout, download)
      request = METHODS.fetch(method).new("#{@base.path}#{path}")
      request["Accept"] = download ? "*/*" : "application/json"
      request["User-Agent"] = "gatepost-ruby/#{VERSION}"
      request["Authorization"] = "Bearer #{@api_key}" if @api_key
      headers.each { |name, value| request[name] = value }
      upload&.attach(request)
      Net::HTTP.start(@base.host, @base.port, use_ssl: @base.scheme == "https",
                                              open_timeout: timeout, read_timeout: timeout,
                                              write_timeout: timeout, ssl_timeout: timeout) do |http|
        http.request(request)
      end
    end

    def json_upload(method, body)
      return Upload.new("application/json", JSON.generate(body)) unless body.nil?

      # net/http gives a POST without a body an empty form body (application/x-www-form-urlencoded),
      # which the API refuses: a body-less POST (verify, rotate, test) sends an empty JSON object.
      Upload.new("application/json", "{}") if method == "POST"
    end

    def backoff(attempt)
      rand * [@max_backoff, @backoff * (2**attempt)].min
    end

    def decode(status, raw)
      return nil if status == 204 || raw.nil? || raw.empty?

      JSON.parse(raw)
    rescue JSON::ParserError
      raise MalformedResponseError.new(status, "the answer is not JSON: #{raw[0, 200].inspect}")
    end

    def error_of(status, raw, wait)
      error = JSON.parse(raw.to_s).fetch("error")
      Gatepost.api_error(status, code: error.fetch("code").to_s, message: error.fetch("message").to_s,
                                 details: error["details"], retry_after: wait)
    rescue JSON::ParserError, KeyError, TypeError, NoMethodError
      MalformedResponseError.new(status, "not the API's error shape: #{raw.to_s[0, 200].inspect}")
    end
  end
end
