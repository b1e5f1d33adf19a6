# frozen_string_literal: true

module Gatepost
  # Base of every error the SDK raises.
  class Error < StandardError; end

  # The API answered with its error shape, {"error": {"code", "message", "details"}}: `code` is
  # the stable code of docs/errors.md. Subclasses by HTTP status.
  class APIError < Error
    attr_reader :status, :code, :details, :retry_after

    def initialize(status:, code:, message:, details: nil, retry_after: nil)
      super("#{status} #{code}: #{message}")
      @status = status
      @code = code
      @api_message = message
      # One entry per field at fault: {"field" => ..., "message" => ...}.
      @details = details || []
      # Seconds, from the Retry-After header, when the answer had one.
      @retry_after = retry_after
    end

    # The API's sentence, without the status and code.
    def api_message
      @api_message
    end
  end

  class BadRequestError < APIError; end
  class AuthenticationError < APIError; end
  class PermissionDeniedError < APIError; end
  class NotFoundError < APIError; end
  class ConflictError < APIError; end
  # 422: refused by policy (suppressed recipient, unverified sender, ...).
  class UnprocessableError < APIError; end
  # 429: over a rate or the daily quota; retry_after says when to try again.
  class RateLimitError < APIError; end
  class ServerError < APIError; end

  ERRORS_BY_STATUS = {
    400 => BadRequestError, 401 => AuthenticationError, 403 => PermissionDeniedError, 404 => NotFoundError,
    409 => ConflictError, 422 => UnprocessableError, 429 => RateLimitError
  }.freeze

  def self.api_error(status, **fields)
    klass = ERRORS_BY_STATUS.fetch(status) { status >= 500 ? ServerError : APIError }
    klass.new(status: status, **fields)
  end

  # The server answered something that is not the API's JSON (a proxy's page, a cut body).
  class MalformedResponseError < Error
    attr_reader :status

    def initialize(status, message)
      super("#{status}: #{message}")
      @status = status
    end
  end

  # No answer: the connection failed or timed out (after the retries).
  class ConnectionError < Error; end
  class TimeoutError < ConnectionError; end
end
