# frozen_string_literal: true

require "json"
require "openssl"
require_relative "errors"

module Gatepost
  # Verifying a Gatepost webhook delivery on the receiving side, with no call to Gatepost
  # (docs/webhooks.md, "The signature, byte for byte"):
  #
  #   x-service-signature: t=<unix seconds>,v1=<hex>[,v1=<hex>...]
  #   v1 = hex(HMAC-SHA256(key = the secret as given, "whsec_...", UTF-8; message = "<t>.<raw body>"))
  #
  # Several v1 values appear while a secret rotates: any one matching any of your secrets is
  # enough. A timestamp more than `tolerance` seconds (default 300) from now is refused, so a
  # captured delivery cannot be replayed later.
  module Webhooks
    SIGNATURE_HEADER = "x-service-signature"
    DEFAULT_TOLERANCE_SECONDS = 5 * 60

    # reason: :missing_signature, :malformed_signature, :timestamp_out_of_tolerance,
    # :no_matching_signature or :invalid_payload.
    class VerificationError < Gatepost::Error
      attr_reader :reason

      def initialize(reason, message)
        super(message)
        @reason = reason
      end
    end

    # Hex HMAC-SHA256 of "<t>.<payload>" under secret: what v1 holds.
    def self.compute_signature(secret, timestamp, payload)
      OpenSSL::HMAC.hexdigest("SHA256", secret.to_s.b, "#{timestamp}.".b + payload.to_s.b)
    end

    # A header from a Hash in any case (values a String or an Array), or a Rack env
    # (HTTP_X_SERVICE_SIGNATURE).
    def self.header(headers, name)
      values = headers.each_with_object([]) do |(key, value), found|
        key = key.to_s.downcase
        key = key.delete_prefix("http_").tr("_", "-") if key.start_with?("http_")
        found.concat(Array(value)) if key == name
      end
      values.empty? ? nil : values.join(",")
    end

    # Checks a delivery's x-service-signature and answers the event it carries (a Hash).
    # payload is the raw request body, byte for byte as received (Rack: request.body.read);
    # secret the endpoint's "whsec_..." secret, or several (old and new during a rotation).
    # Raises VerificationError, with a reason, when the signature is missing, malformed, too old
    # or too new, or matches none of the secrets.
    def self.verify(payload:, headers:, secret:, tolerance: DEFAULT_TOLERANCE_SECONDS, now: Time.now)
      value = header(headers, SIGNATURE_HEADER)
      raise VerificationError.new(:missing_signature, "No #{SIGNATURE_HEADER} header.") if value.nil? || value.empty?

      t = nil
      given = []
      value.split(",").each do |part|
        key, v = part.split("=", 2).map { |s| s.to_s.strip }
        if key == "t" && v.match?(/\A\d+\z/) then t = Integer(v, 10)
        elsif key == "v1" && v.match?(/\A[0-9a-f]{64}\z/) then given << v
        end
      end
      if t.nil? || given.empty?
        raise VerificationError.new(:malformed_signature, "#{SIGNATURE_HEADER} must be \"t=<unix>,v1=<hex>[,v1=<hex>]\".")
      end
      if (now.to_i - t).abs > tolerance
        raise VerificationError.new(:timestamp_out_of_tolerance, "The timestamp #{t} is more than #{tolerance} s from now.")
      end

      # Every pair is compared (no early exit), each in constant time.
      match = false
      Array(secret).each do |s|
        expected = compute_signature(s, t, payload)
        given.each { |v1| match = OpenSSL.fixed_length_secure_compare(expected, v1) || match }
      end
      raise VerificationError.new(:no_matching_signature, "No v1 signature matches the secret.") unless match

      event = begin
        JSON.parse(payload.to_s)
      rescue JSON::ParserError
        nil
      end
      raise VerificationError.new(:invalid_payload, "The signed payload is not a JSON event.") unless event.is_a?(Hash)

      event
    end
  end
end
