defmodule Tollgate.DoctestTest do
  use ExUnit.Case, async: true
  doctest Tollgate.TokenBucket
  doctest Tollgate.Credits
end
