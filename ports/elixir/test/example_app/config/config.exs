import Config

# Compile the port's modules under the seeds' names too.
config :tollgate, seed_modules: true
