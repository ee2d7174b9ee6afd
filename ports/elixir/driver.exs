# The Elixir port's conformance driver: elixir ports/elixir/driver.exs
# Speaks spec/protocol.md on stdin/stdout over the port's public API
# (lib/tollgate/*.ex) and the driver modules (driver/*.ex); see README.md.
#
# Start-up: the sources are compiled once into _build/driver/<hash of the
# sources>/ and loaded from there on later runs (about 0.4 s instead of 1.2 s).
# Where that directory cannot be written, they are compiled in memory.
root = __DIR__

files =
  Enum.sort(Path.wildcard(Path.join(root, "lib/**/*.ex"))) ++
    Enum.map(~w(json.ex driver.ex), &Path.join([root, "driver", &1]))

hash =
  :erlang.md5(for(f <- files, do: [Path.relative_to(f, root), 0, File.read!(f), 0]))
  |> Base.encode16(case: :lower)

cache = Path.join([root, "_build", "driver", hash])
stamp = Path.join(cache, "complete")

cached? =
  File.exists?(stamp) or
    try do
      tmp = cache <> ".tmp." <> Integer.to_string(System.unique_integer([:positive]))
      File.mkdir_p!(tmp)
      {:ok, _modules, _warnings} = Kernel.ParallelCompiler.compile_to_path(files, tmp)
      File.write!(Path.join(tmp, "complete"), "")

      # Another driver may have won the race; either copy is complete.
      case File.rename(tmp, cache) do
        :ok -> :ok
        {:error, _} -> File.rm_rf!(tmp)
      end

      File.exists?(stamp)
    rescue
      e in [File.Error, File.RenameError] ->
        IO.puts(:stderr, "driver: no compile cache (#{Exception.message(e)}); compiling in memory")
        false
    end

if cached? do
  true = Code.prepend_path(cache)
else
  Kernel.ParallelCompiler.require(files)
end

Tollgate.Driver.main()
