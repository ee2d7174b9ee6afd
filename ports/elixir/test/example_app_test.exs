defmodule Tollgate.ExampleAppTest do
  # test/example_app is a Mix project written against the seeds' documented
  # API (it names Raxol.Core.TokenBucket and DrinkMeAlice.Credits and calls
  # nothing else) with this port as a path dependency. It must compile
  # without a warning and run unchanged.
  use ExUnit.Case, async: true

  @dir Path.expand("example_app", __DIR__)
  @moduletag timeout: 180_000

  defp mix(args) do
    # A fresh Mix of its own: its own environment and build, no Hex.
    env = [{"MIX_ENV", "dev"}, {"MIX_BUILD_PATH", nil}, {"MIX_DEPS_PATH", nil}, {"MIX_EXS", nil}]
    System.cmd("mix", args, cd: @dir, env: env, stderr_to_stdout: true)
  end

  setup_all do
    {out, 0} = mix(["compile", "--warnings-as-errors", "--force"])
    {run, status} = mix(["run", "-e", "SeedApp.main()"])
    %{compile: out, run: run, status: status}
  end

  test "compiles against the port without a warning", %{compile: out} do
    refute out =~ "warning"
    assert out =~ "Generated seed_app app"
  end

  test "runs and sees the seeds' documented behaviour", %{run: run, status: status} do
    assert status == 0, run

    facts =
      for line <- String.split(run, "\n"), [_, k, v] <- [Regex.run(~r/^(\w+): (.*)$/, line)], into: %{}, do: {k, v}

    free =
      "%{general: %{enqueued: 0, free: 26, processing: 0, reserved: 0}, " <>
        "internal: %{enqueued: 0, free: 6, processing: 0, reserved: 0}}"

    assert facts == %{
             "burst_admitted" => "30",
             "then_limited_with_hint" => "true",
             "batch_limited_with_hint" => "true",
             "batch_after_reset_remaining" => "20.0",
             "etherscan_admitted" => "5",
             "available_after_reset_all" => "5.0",
             "served_in_order" => "true",
             "concurrent_answered" => "60",
             "concurrent_served_or_busy" => "true",
             "concurrent_some_served" => "true",
             "expired_or_timed_out" => "true",
             "internal_class" => "{:ok, {:served, :internal_job}}",
             "usage_after" => free,
             "bounds" => "%{general: 26, internal: 6, total: 32}",
             "after_owner_stopped" => "{:error, :no_owner}"
           }
  end
end
