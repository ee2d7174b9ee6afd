[
  inputs: ["{mix,.formatter,driver}.exs", "{config,lib,driver,test}/**/*.{ex,exs}"],
  line_length: 120
]
