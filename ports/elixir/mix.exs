defmodule Tollgate.MixProject do
  use Mix.Project

  # No dependencies: the project builds and tests offline, without Hex.
  def project do
    [
      app: :tollgate,
      version: "0.1.0",
      elixir: "~> 1.14",
      elixirc_paths: elixirc_paths(Mix.env()),
      start_permanent: false,
      deps: []
    ]
  end

  def application, do: [extra_applications: []]

  # The driver (driver/) is not part of the library; the tests compile it
  # too, so that its warnings fail CI and its codec can be tested.
  defp elixirc_paths(:test), do: ["lib", "driver"]
  defp elixirc_paths(_), do: ["lib"]
end
