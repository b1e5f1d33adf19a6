# frozen_string_literal: true

require "socket"

# A tiny HTTP/1.1 server on loopback for the tests (Ruby has no HTTP server of its own since 3.0):
# it records each request and answers what `respond` (a lambda) says, given the request and how
# many came before it. One request per connection.
class LocalServer
  Request = Struct.new(:method, :path, :headers, :body)
  Answer = Struct.new(:status, :body, :headers) do
    def initialize(status, body = "", headers = {}) = super
  end

  attr_reader :received

  # Yields a started server to the block and closes it after; answers the block's value.
  def self.open(respond)
    server = new(respond)
    yield server
  ensure
    server&.close
  end

  def initialize(respond)
    @respond = respond
    @received = []
    @lock = Mutex.new
    @server = TCPServer.new("127.0.0.1", 0)
    @thread = Thread.new do
      loop { serve(@server.accept) }
    rescue IOError, Errno::EBADF
      # closed
    end
  end

  def url = "http://127.0.0.1:#{@server.addr[1]}"

  def close
    @server.close
    @thread.join
  end

  private

  def serve(socket)
    Thread.new do
      method, path = socket.gets.to_s.split(" ")
      headers = {}
      while (line = socket.gets) && line != "\r\n"
        name, value = line.split(":", 2)
        headers[name.strip.downcase] = value.strip
      end
      body = socket.read(headers.fetch("content-length", "0").to_i).to_s
      request = Request.new(method, path, headers, body)
      n = @lock.synchronize { @received.push(request).size - 1 }
      answer = @respond.call(request, n)
      head = ["HTTP/1.1 #{answer.status} X", "Content-Length: #{answer.body.bytesize}", "Connection: close"]
      answer.headers.each { |k, v| head << "#{k}: #{v}" }
      socket.write("#{head.join("\r\n")}\r\n\r\n#{answer.body}")
    ensure
      socket.close
    end
  end
end
