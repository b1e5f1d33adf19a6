# frozen_string_literal: true

require "base64"
require "digest"
require "json"
require "openssl"
require_relative "errors"

module Gatepost
  # Verifying Gatepost's signed delivery receipts, with no call to Gatepost (docs/receipts.md): a
  # receipt is a compact JWS (EdDSA over Ed25519) checked against the operator's JWK Set
  # (/.well-known/jwks.json, or Client#get_jwks), with Ruby's own OpenSSL.
  #
  # A tenant's receipts form a chain: receipt n carries "seq" n and "prev", the lowercase hex
  # SHA-256 of the payload bytes of receipt n-1 (nil on the first). verify_chain checks the links,
  # so a receipt changed, deleted from the middle, or moved is found.
  module Receipts
    TYP = "gatepost-receipt+jws"
    HEX64 = /\A[0-9a-f]{64}\z/.freeze
    # The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): the raw 32-byte key follows.
    ED25519_SPKI_PREFIX = ["302a300506032b6570032100"].pack("H*").freeze

    # reason: :malformed, :unknown_key, :invalid_signature, :tenant_mismatch, :out_of_order,
    # :sequence_gap or :chain_broken; index: in a chain, the position of the receipt that failed.
    class VerificationError < Gatepost::Error
      attr_reader :reason, :index

      def initialize(reason, message, index = nil)
        super(message)
        @reason = reason
        @index = index
      end
    end

    def self.b64url(part)
      raise ArgumentError, "not base64url" unless part.match?(/\A[A-Za-z0-9_-]*\z/)

      Base64.urlsafe_decode64(part + ("=" * (-part.length % 4)))
    end

    # The chain hash of a receipt: lowercase hex SHA-256 of its payload bytes.
    def self.receipt_hash(jws)
      Digest::SHA256.hexdigest(b64url(jws.to_s.split(".")[1].to_s))
    end

    def self.key_for(jwks, kid)
      keys = Array(jwks["keys"] || jwks[:keys]).select do |k|
        k.is_a?(Hash) && k["kid"] == kid && k["kty"] == "OKP" && k["crv"] == "Ed25519" && k.fetch("alg", "EdDSA") == "EdDSA"
      end
      raise VerificationError.new(:unknown_key, "The receipt names no single key of the JWK Set.") unless keys.size == 1

      raw = b64url(keys[0]["x"].to_s)
      raise ArgumentError, "not 32 bytes" unless raw.bytesize == 32

      OpenSSL::PKey.read(ED25519_SPKI_PREFIX + raw)
    rescue ArgumentError, OpenSSL::PKey::PKeyError
      raise VerificationError.new(:unknown_key, "The JWK Set's key is not an Ed25519 public key.")
    end

    def self.claims_of(payload)
      claims = JSON.parse(payload.dup.force_encoding(Encoding::UTF_8))
      ok = claims.is_a?(Hash) &&
           claims["id"].is_a?(String) && claims["id"].start_with?("rcp_") &&
           claims["tenant_id"].is_a?(String) &&
           claims["seq"].is_a?(Integer) && claims["seq"] >= 1 &&
           (claims["prev"].nil? || (claims["prev"].is_a?(String) && claims["prev"].match?(HEX64))) &&
           ((claims["seq"] == 1) == claims["prev"].nil?) &&
           claims["sha256"].is_a?(String) && claims["sha256"].match?(HEX64)
      raise VerificationError.new(:malformed, "The receipt payload does not have the fields of a receipt.") unless ok

      claims
    rescue JSON::ParserError, EncodingError
      raise VerificationError.new(:malformed, "The receipt payload is not JSON.")
    end

    # Checks a receipt's signature against the JWK Set (a Hash, as parsed from its JSON) and
    # answers its claims. Raises VerificationError (with a reason) when it is not a receipt, names
    # no key of the set, or its signature does not match.
    def self.verify(jws, jwks)
      parts = jws.to_s.split(".", -1)
      raise VerificationError.new(:malformed, "Not a receipt: a compact JWS has three parts.") unless parts.size == 3

      begin
        header = JSON.parse(b64url(parts[0]))
        payload = b64url(parts[1])
        signature = b64url(parts[2])
      rescue ArgumentError, JSON::ParserError
        raise VerificationError.new(:malformed, "Not a receipt: a part is not base64url JSON.")
      end
      unless header.is_a?(Hash) && header["alg"] == "EdDSA"
        raise VerificationError.new(:malformed, "Not a receipt: its alg is not \"EdDSA\".")
      end

      key = key_for(jwks, header["kid"])
      valid = begin
        key.verify(nil, signature, "#{parts[0]}.#{parts[1]}")
      rescue OpenSSL::PKey::PKeyError
        false
      end
      raise VerificationError.new(:invalid_signature, "The receipt signature does not match.") unless valid
      raise VerificationError.new(:malformed, "Not a receipt: its typ is not \"#{TYP}\".") unless header["typ"] == TYP

      claims_of(payload)
    end

    # Verifies each receipt and the links between them: one tenant's, in order of "seq",
    # consecutive, each "prev" the hash of the one before. Answers the claims, in order.
    def self.verify_chain(receipts, jwks)
      receipts.each_with_index.with_object([]) do |(jws, i), out|
        claims = begin
          verify(jws, jwks)
        rescue VerificationError => e
          raise VerificationError.new(e.reason, "Receipt #{i}: #{e.message}", i)
        end
        before = out.last
        if before
          if claims["tenant_id"] != before["tenant_id"]
            raise VerificationError.new(:tenant_mismatch, "Receipt #{i} is of another tenant than receipt #{i - 1}.", i)
          end
          if claims["seq"] <= before["seq"]
            raise VerificationError.new(:out_of_order, "Receipt #{i} (seq #{claims['seq']}) comes after seq #{before['seq']}.", i)
          end
          if claims["seq"] != before["seq"] + 1
            missing = claims["seq"] - before["seq"] - 1
            raise VerificationError.new(:sequence_gap,
                                        "#{missing} receipt#{missing == 1 ? '' : 's'} missing between seq #{before['seq']} " \
                                        "and seq #{claims['seq']}.", i)
          end
          unless claims["prev"] == receipt_hash(receipts[i - 1])
            raise VerificationError.new(:chain_broken, "Receipt #{i} does not link to receipt #{i - 1}.", i)
          end
        end
        out << claims
      end
    end
  end
end
