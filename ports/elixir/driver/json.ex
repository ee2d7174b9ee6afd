defmodule Tollgate.JSON do
  @moduledoc """
  The small JSON codec the driver needs (Elixir 1.14 ships none): RFC 8259
  objects, arrays, strings, numbers, true/false/null.

  Numbers without a fraction or exponent decode to integers (any size);
  others to floats, correctly rounded by `:erlang.binary_to_float/1`. Floats
  encode in shortest round-trip form (`:erlang.float_to_binary(f, [:short])`),
  as spec/protocol.md requires.
  """

  # ---- decoding -------------------------------------------------------------

  @doc "One JSON value from `bin` (surrounding whitespace allowed), or why not."
  @spec decode(binary()) :: {:ok, term()} | {:error, String.t()}
  def decode(bin) when is_binary(bin) do
    try do
      {value, rest} = value(skip(bin))

      case skip(rest) do
        "" -> {:ok, value}
        other -> {:error, "trailing characters: " <> binary_part(other, 0, min(byte_size(other), 20))}
      end
    catch
      {:json, msg} -> {:error, msg}
    end
  end

  defp fail(msg), do: throw({:json, msg})

  defp skip(<<c, rest::binary>>) when c in [?\s, ?\t, ?\n, ?\r], do: skip(rest)
  defp skip(bin), do: bin

  defp value(<<"{", rest::binary>>), do: object(skip(rest), %{})
  defp value(<<"[", rest::binary>>), do: array(skip(rest), [])
  defp value(<<"\"", rest::binary>>), do: string(rest, [])
  defp value(<<"true", rest::binary>>), do: {true, rest}
  defp value(<<"false", rest::binary>>), do: {false, rest}
  defp value(<<"null", rest::binary>>), do: {nil, rest}
  defp value(<<c, _::binary>> = bin) when c == ?- or c in ?0..?9, do: number(bin)
  defp value(""), do: fail("unexpected end of input")
  defp value(<<c, _::binary>>), do: fail("unexpected character #{<<c>>}")

  defp object(<<"}", rest::binary>>, acc), do: {acc, rest}

  defp object(<<"\"", rest::binary>>, acc) do
    {key, rest} = string(rest, [])

    case skip(rest) do
      <<":", rest::binary>> ->
        {val, rest} = value(skip(rest))
        acc = Map.put(acc, key, val)

        case skip(rest) do
          <<",", rest::binary>> -> object_key(skip(rest), acc)
          <<"}", rest::binary>> -> {acc, rest}
          _ -> fail("expected , or } in object")
        end

      _ ->
        fail("expected : in object")
    end
  end

  defp object(_, _), do: fail("expected a string key or } in object")

  defp object_key(<<"\"", _::binary>> = bin, acc), do: object(bin, acc)
  defp object_key(_, _), do: fail("expected a string key in object")

  defp array(<<"]", rest::binary>>, acc), do: {Enum.reverse(acc), rest}

  defp array(bin, acc) do
    {val, rest} = value(bin)

    case skip(rest) do
      <<",", rest::binary>> -> array(skip(rest), [val | acc])
      <<"]", rest::binary>> -> {Enum.reverse([val | acc]), rest}
      _ -> fail("expected , or ] in array")
    end
  end

  defp string(<<"\"", rest::binary>>, acc), do: {IO.iodata_to_binary(Enum.reverse(acc)), rest}

  defp string(<<"\\", e, rest::binary>>, acc) do
    case e do
      ?" -> string(rest, ["\"" | acc])
      ?\\ -> string(rest, ["\\" | acc])
      ?/ -> string(rest, ["/" | acc])
      ?b -> string(rest, ["\b" | acc])
      ?f -> string(rest, ["\f" | acc])
      ?n -> string(rest, ["\n" | acc])
      ?r -> string(rest, ["\r" | acc])
      ?t -> string(rest, ["\t" | acc])
      ?u -> unicode(rest, acc)
      _ -> fail("bad escape in string")
    end
  end

  defp string(<<c, _::binary>>, _) when c < 0x20, do: fail("control character in string")

  defp string(<<c, rest::binary>>, acc), do: string(rest, [c | acc])
  defp string("", _), do: fail("unterminated string")

  defp unicode(<<h::binary-size(4), "\\u", l::binary-size(4), rest::binary>>, acc) do
    hi = hex(h)
    lo = hex(l)

    if hi in 0xD800..0xDBFF and lo in 0xDC00..0xDFFF do
      cp = 0x10000 + Bitwise.bsl(hi - 0xD800, 10) + (lo - 0xDC00)
      string(rest, [<<cp::utf8>> | acc])
    else
      string(<<"\\u", l::binary, rest::binary>>, [codepoint(hi) | acc])
    end
  end

  defp unicode(<<h::binary-size(4), rest::binary>>, acc), do: string(rest, [codepoint(hex(h)) | acc])
  defp unicode(_, _), do: fail("bad \\u escape")

  defp codepoint(cp) when cp in 0xD800..0xDFFF, do: fail("lone surrogate in \\u escape")
  defp codepoint(cp), do: <<cp::utf8>>

  defp hex(h) do
    case Integer.parse(h, 16) do
      {n, ""} -> n
      _ -> fail("bad \\u escape")
    end
  end

  defp number(bin) do
    case Regex.run(~r/\A(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?([eE][+-]?[0-9]+)?/, bin) do
      [whole, int | more] ->
        rest = binary_part(bin, byte_size(whole), byte_size(bin) - byte_size(whole))

        case more do
          [] ->
            {String.to_integer(int), rest}

          [frac | exp] ->
            frac = if frac == "", do: ".0", else: frac
            exp = List.first(exp) || ""

            try do
              {:erlang.binary_to_float(int <> frac <> exp), rest}
            rescue
              ArgumentError -> fail("number out of range: " <> whole)
            end
        end

      nil ->
        fail("bad number")
    end
  end

  # ---- encoding -------------------------------------------------------------

  @doc "JSON text of `nil`, booleans, numbers, strings, atoms (as strings), lists and maps."
  @spec encode(term()) :: iodata()
  def encode(nil), do: "null"
  def encode(true), do: "true"
  def encode(false), do: "false"
  def encode(n) when is_integer(n), do: Integer.to_string(n)
  def encode(f) when is_float(f), do: :erlang.float_to_binary(f, [:short])
  def encode(s) when is_binary(s), do: [?", escape(s, []), ?"]
  def encode(a) when is_atom(a), do: encode(Atom.to_string(a))
  def encode(l) when is_list(l), do: [?[, Enum.intersperse(Enum.map(l, &encode/1), ?,), ?]]

  def encode(m) when is_map(m) do
    pairs = Enum.map(m, fn {k, v} -> [encode(to_string(k)), ?:, encode(v)] end)
    [?{, Enum.intersperse(pairs, ?,), ?}]
  end

  defp escape(<<>>, acc), do: Enum.reverse(acc)
  defp escape(<<?", rest::binary>>, acc), do: escape(rest, ["\\\"" | acc])
  defp escape(<<?\\, rest::binary>>, acc), do: escape(rest, ["\\\\" | acc])
  defp escape(<<?\n, rest::binary>>, acc), do: escape(rest, ["\\n" | acc])
  defp escape(<<?\r, rest::binary>>, acc), do: escape(rest, ["\\r" | acc])
  defp escape(<<?\t, rest::binary>>, acc), do: escape(rest, ["\\t" | acc])

  defp escape(<<c, rest::binary>>, acc) when c < 0x20,
    do: escape(rest, [:io_lib.format("\\u~4.16.0b", [c]) | acc])

  defp escape(<<c, rest::binary>>, acc), do: escape(rest, [c | acc])
end
