defmodule Tollgate.DriverTest do
  # The driver as conform runs it (elixir driver.exs, JSON lines on stdio),
  # for a few requests; `tollgate conform` runs the full suites.
  use ExUnit.Case, async: true
  alias Tollgate.JSON

  @driver Path.expand("../driver.exs", __DIR__)

  defp run(requests) do
    input = Enum.map_join(requests, "", &(IO.iodata_to_binary(JSON.encode(&1)) <> "\n"))
    path = Path.join(System.tmp_dir!(), "tollgate-driver-test-#{System.unique_integer([:positive])}.jsonl")
    File.write!(path, input)

    try do
      {out, 0} = System.cmd("sh", ["-c", "exec elixir \"$0\" < \"$1\"", @driver, path])
      for line <- String.split(out, "\n", trim: true), do: elem(JSON.decode(line), 1)
    after
      File.rm(path)
    end
  end

  test "hello, a take with a key that is a match-spec atom, T9's invalid_argument, C12's bad_request, T12's reclaim" do
    answers =
      run([
        %{"id" => 1, "op" => "hello", "protocol" => 2},
        %{
          "id" => 2,
          "op" => "tb.take",
          "table" => "t",
          "key" => ":_",
          "capacity" => 7,
          "refill_per_second" => 3,
          "cost" => 7,
          "now_ms" => 907
        },
        %{
          "id" => 3,
          "op" => "tb.peek",
          "table" => "t",
          "key" => ":_",
          "capacity" => 7,
          "refill_per_second" => 3,
          "now_ms" => 1000
        },
        %{
          "id" => 4,
          "op" => "tb.take",
          "table" => "t",
          "key" => "k",
          "capacity" => 0,
          "refill_per_second" => "NaN",
          "now_ms" => 0
        },
        %{"id" => 5, "op" => "cr.new", "table" => "c"},
        %{"id" => 6, "op" => "cr.take", "table" => "c", "slot" => 33, "epoch" => 1},
        # the bucket of key :_ is full again at 4000 ms; a cost is ignored
        %{
          "id" => 7,
          "op" => "tb.reclaim",
          "table" => "t",
          "capacity" => 7,
          "refill_per_second" => 3,
          "cost" => 99,
          "now_ms" => 4000
        },
        %{"id" => 8, "op" => "tb.reclaim", "table" => "t", "capacity" => 7, "refill_per_second" => 3},
        %{
          "id" => 9,
          "op" => "tb.reclaim",
          "table" => "t",
          "capacity" => 7,
          "refill_per_second" => "NaN",
          "now_ms" => 0
        },
        %{
          "id" => 10,
          "op" => "tb.take",
          "table" => "t",
          "key" => ":_",
          "capacity" => 7,
          "refill_per_second" => 3,
          "cost" => 7,
          "now_ms" => 0
        },
        %{
          "id" => 11,
          "op" => "tb.retry_after",
          "table" => "t",
          "key" => ":_",
          "capacity" => 7,
          "refill_per_second" => 3,
          "now_ms" => 4000
        }
      ])
      |> Map.new(&{&1["id"], &1})

    assert %{"ok" => true, "protocol" => 2, "primitives" => ["tb", "cr"]} = answers[1]
    assert answers[2] == %{"id" => 2, "ok" => true, "remaining" => 0.0}
    assert answers[3] == %{"id" => 3, "ok" => true, "tokens" => 0.279}
    assert %{"ok" => false, "error" => "invalid_argument", "field" => "capacity", "message" => m} = answers[4]
    assert m =~ ":capacity must be a positive number, got: 0"
    assert %{"ok" => false, "error" => "bad_request", "message" => m} = answers[6]
    assert m =~ "slot an integer in 1..32"
    assert answers[7] == %{"id" => 7, "ok" => true, "reclaimed" => 1}
    assert %{"ok" => false, "error" => "bad_request", "message" => m} = answers[8]
    assert m =~ "field now_ms is required"
    assert %{"ok" => false, "error" => "invalid_argument", "field" => "refill_per_second"} = answers[9]
    # the floor: the stale take at 0 ms is stamped 4000 ms
    assert answers[10] == %{"id" => 10, "ok" => true, "remaining" => 0.0}
    assert answers[11] == %{"id" => 11, "ok" => true, "retry_after_ms" => 334}
  end

  test "the codec: shortest round-trip floats, exact int64 extremes" do
    for x <- [0.1 + 0.2, 5.0e-324, 1.7976931348623157e308, -9_223_372_036_854_775_808, 9_223_372_036_854_775_807] do
      assert JSON.decode(IO.iodata_to_binary(JSON.encode(x))) == {:ok, x}
    end

    assert IO.iodata_to_binary(JSON.encode(0.30000000000000004)) == "0.30000000000000004"
  end
end
