# frozen_string_literal: true

require_relative "lib/gatepost/version"

Gem::Specification.new do |spec|
  spec.name = "gatepost"
  spec.version = Gatepost::VERSION
  spec.summary = "Client for Gatepost, the self-hostable transactional email service"
  spec.description = "Send email, read a message's timeline, manage templates, suppressions, webhooks, " \
                     "sending domains, audiences and contacts, and verify webhook deliveries and signed delivery receipts offline."
  spec.authors = ["Gatepost"]
  spec.license = "MIT"
  spec.files = Dir["lib/**/*.rb", "README.md"]
  spec.require_paths = ["lib"]
  # net/http, json and openssl (Ed25519 receipts included) are Ruby's own: no runtime dependency.
  spec.required_ruby_version = ">= 3.0"
  spec.add_development_dependency "minitest", ">= 5.15"
end
