# frozen_string_literal: true

module Gatepost
  VERSION = "0.1.0"
end
