# frozen_string_literal: true

# Retries, timeouts and bad answers, against tiny servers of the test's own.
require_relative "test_helper"
require "stringio"

class RetriesTest < Minitest::Test
  SENT = { "id" => "msg_1", "status" => "queued", "to" => "a@example.com", "created_at" => "x", "send_at" => nil,
           "sandbox" => true }.freeze

  def error_body(code) = JSON.generate({ error: { code: code, message: "Refused." } })
  def client(server, **options) = Gatepost::Client.new(api_key: "gp_sandbox_x", base_url: server.url, **options)
  def answer(status, body = "", headers = {}) = LocalServer::Answer.new(status, body, headers)

  def test_a_429_is_retried_after_its_retry_after_with_the_same_idempotency_key
    respond = ->(_r, n) { n.zero? ? answer(429, error_body("rate_limited"), "Retry-After" => "1") : answer(202, JSON.generate(SENT)) }
    LocalServer.open(respond) do |server|
      assert_equal SENT, client(server).send_email({ to: "a@example.com", subject: "s", html: "h" }, idempotency_key: "k-1")
      assert_equal 2, server.received.size
      assert_equal %w[k-1 k-1], server.received.map { |r| r.headers["idempotency-key"] }
      assert_equal "Bearer gp_sandbox_x", server.received[1].headers["authorization"]
    end
  end

  def test_retries_are_bounded_and_a_long_retry_after_is_raised_at_once
    LocalServer.open(->(_r, _n) { answer(429, error_body("rate_limited"), "Retry-After" => "0") }) do |server|
      limited = assert_raises(Gatepost::RateLimitError) { client(server, max_attempts: 3).get_message("msg_1") }
      assert_equal ["rate_limited", 0, 3], [limited.code, limited.retry_after, server.received.size]
    end
    # A daily quota's Retry-After counts the hours to midnight: no waiting that long.
    LocalServer.open(->(_r, _n) { answer(429, error_body("quota_exceeded"), "Retry-After" => "3600") }) do |server|
      over = assert_raises(Gatepost::RateLimitError) { client(server).get_message("msg_1") }
      assert_equal ["quota_exceeded", 3600, 1], [over.code, over.retry_after, server.received.size]
    end
  end

  def test_a_5xx_is_retried_when_repeating_is_safe_only
    respond = ->(_r, n) { n.zero? ? answer(503, error_body("storage_unavailable")) : answer(200, '{"data":[]}') }
    LocalServer.open(respond) do |server|
      assert_equal [], client(server).list_templates
      assert_equal 2, server.received.size
    end
    # A POST without an idempotency key could act twice: its 5xx is raised.
    LocalServer.open(respond) do |server|
      raised = assert_raises(Gatepost::ServerError) { client(server).create_domain("a.example") }
      assert_equal [503, "storage_unavailable", 1], [raised.status, raised.code, server.received.size]
    end
  end

  def test_a_malformed_answer_is_a_typed_error
    LocalServer.open(->(_r, _n) { answer(200, "<html>proxy</html>") }) do |server|
      assert_raises(Gatepost::MalformedResponseError) { client(server).get_message("msg_1") }
    end
    LocalServer.open(->(_r, _n) { answer(502, "<html>bad gateway</html>") }) do |server|
      bad = assert_raises(Gatepost::MalformedResponseError) { client(server, max_attempts: 2).get_message("msg_1") }
      assert_equal [502, 2], [bad.status, server.received.size]
    end
  end

  def test_a_server_that_is_down_or_silent_is_an_error_not_a_hang
    closed = TCPServer.new("127.0.0.1", 0)
    port = closed.addr[1]
    closed.close
    down = Gatepost::Client.new(api_key: "k", base_url: "http://127.0.0.1:#{port}", max_attempts: 2)
    assert_raises(Gatepost::ConnectionError) { down.get_message("msg_1") }
    # Accepts connections, never answers.
    silent = TCPServer.new("127.0.0.1", 0)
    begin
      mute = Gatepost::Client.new(api_key: "k", base_url: "http://127.0.0.1:#{silent.addr[1]}", timeout: 0.3, max_attempts: 2)
      assert_raises(Gatepost::TimeoutError) { mute.get_message("msg_1") }
    ensure
      silent.close
    end
  end

  def test_a_csv_file_is_sent_again_whole_after_a_429
    report = { added: 1, updated: 0, refused_count: 0, refused: [] }
    respond = ->(_r, n) { n.zero? ? answer(429, error_body("rate_limited"), "Retry-After" => "0") : answer(200, JSON.generate(report)) }
    LocalServer.open(respond) do |server|
      got = client(server).import_contacts("aud_1", StringIO.new("email\nann@example.com\n"))
      assert_equal Gatepost::ImportReport.new(**report), got
      assert_equal ["email\nann@example.com\n"] * 2, server.received.map(&:body)
      assert_equal ["text/csv"] * 2, server.received.map { |r| r.headers["content-type"] }
    end
  end

  def test_a_csv_that_is_no_file_is_refused_before_any_request
    LocalServer.open(->(_r, _n) { answer(500) }) do |server|
      error = assert_raises(ArgumentError) { client(server).import_contacts("aud_1", 42) }
      assert_match(/String or an IO, not Integer/, error.message)
      assert_empty server.received
    end
  end
end
