# The Elixir port's conformance driver: elixir ports/elixir/driver.exs
# Speaks spec/protocol.md on stdin/stdout; see ports/elixir/README.md.
dir = Path.join(__DIR__, "lib")
for f <- ~w(json.ex token_bucket.ex credits.ex driver.ex), do: Code.require_file(f, dir)
Tollgate.Driver.main()
