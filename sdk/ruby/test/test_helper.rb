# frozen_string_literal: true

# The tests talk to a real Gatepost, started by sdk/ruby/ruby.sdk.test.ts, which passes its URL
# and a fresh tenant's keys in the environment.
require "minitest/autorun"
require "securerandom"
require "gatepost"
require_relative "local_server"

module GatepostTest
  def env(name)
    ENV.fetch(name) { flunk "#{name} is not set: run these tests through sdk/ruby/ruby.sdk.test.ts" }
  end

  def url = env("GATEPOST_URL")
  def live = @live ||= Gatepost::Client.new(api_key: env("GATEPOST_LIVE_KEY"), base_url: url, timeout: 10)
  def sandbox = @sandbox ||= Gatepost::Client.new(api_key: env("GATEPOST_SANDBOX_KEY"), base_url: url, timeout: 10)
  # Another tenant's live key: its inbound MX received GATEPOST_INBOUND_ID (GATEPOST_INBOUND_EML).
  def receiver = @receiver ||= Gatepost::Client.new(api_key: env("GATEPOST_INBOUND_KEY"), base_url: url, timeout: 10)

  # Polls the block until it answers something other than nil or false; fails after `seconds`.
  def eventually(seconds = 20)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
    loop do
      value = yield
      return value if value
      flunk "not reached within #{seconds} s" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      sleep 0.1
    end
  end

  def event_of(client, message_id, type) = client.timeline(message_id).find { |e| e["type"] == type }
end
