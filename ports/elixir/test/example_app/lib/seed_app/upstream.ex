defmodule SeedApp.Upstream do
  @moduledoc """
  Calls to rate-limited upstreams, one bucket per origin, as the token
  bucket's documentation shows.
  """
  alias Raxol.Core.TokenBucket

  @limits %{
    "trongrid" => [capacity: 30, refill_per_second: 5.0],
    "etherscan" => [capacity: 5, refill_per_second: 1.0]
  }

  @doc "A table for the buckets; it lives as long as the calling process."
  def start, do: TokenBucket.new(:upstream_buckets)

  @doc "Runs `call_upstream` unless the origin's bucket is empty."
  def call(table, origin, call_upstream) do
    limit = Map.fetch!(@limits, origin)

    case TokenBucket.take(table, origin, limit) do
      {:ok, _remaining} ->
        call_upstream.()

      {:error, :rate_limited} ->
        {:error, {:retry_after, TokenBucket.retry_after(table, origin, limit)}}
    end
  end

  @doc "Tokens left for an origin, without taking one."
  def available(table, origin), do: TokenBucket.peek(table, origin, Map.fetch!(@limits, origin))

  @doc "A batch job may spend several tokens at once."
  def call_batch(table, origin, size, call_upstream) do
    limit = [cost: size] ++ Map.fetch!(@limits, origin)

    case TokenBucket.take(table, origin, limit) do
      {:ok, remaining} -> {call_upstream.(), remaining}
      {:error, :rate_limited} -> {:error, {:retry_after, TokenBucket.retry_after(table, origin, limit)}}
    end
  end

  @doc "Operator commands."
  def forget(table, origin), do: TokenBucket.reset(table, origin)
  def forget_all(table), do: TokenBucket.reset_all(table)
end
