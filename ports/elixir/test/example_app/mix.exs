defmodule SeedApp.MixProject do
  use Mix.Project

  # An application written against the seeds' documented API
  # (Raxol.Core.TokenBucket, DrinkMeAlice.Credits), run against the port:
  # the only port-specific lines are the dependency below and the
  # seed_modules switch in config/config.exs.
  def project do
    [
      app: :seed_app,
      version: "0.1.0",
      elixir: "~> 1.14",
      deps: [{:tollgate, path: "../.."}]
    ]
  end

  def application, do: [extra_applications: []]
end
