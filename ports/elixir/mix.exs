defmodule Tollgate.MixProject do
  use Mix.Project

  # No dependencies: the project builds and tests offline, without Hex.
  def project do
    [
      app: :tollgate,
      version: "0.1.0",
      elixir: "~> 1.14",
      elixirc_paths: ["lib"],
      start_permanent: false,
      deps: []
    ]
  end

  def application, do: [extra_applications: []]
end
