import Config

# The port's own tests also exercise the seeds' module names
# (lib/tollgate/seed_modules.ex). This file is not read when the port is a
# dependency: an application switches them on in its own config.
if config_env() == :test do
  config :tollgate, seed_modules: true
end
