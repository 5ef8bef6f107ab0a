#!/usr/bin/env bash
# `vlm serve`'s options: every flag its --help lists is parsed, bad values
# are usage errors naming the flag, and an allow-list that cannot be parsed
# stops the server before it listens. Arguments: VLM MAKE_TINY SOURCE_DIR.
source "$(dirname "$0")/lib.sh" "$@"
model=$source_dir/tests/models/qwen2

# Each option the help lists is known to the parser: with a value it is
# never "unknown or incomplete" (a bad value is a different error).
help_flags_are_parsed() {
  local flags
  flags=$("$vlm" serve --help | sed -n 's/^  \(--[a-z][a-z-]*\).*/\1/p')
  [ -n "$flags" ] || return 1
  for flag in $flags; do
    "$vlm" serve --model /nonexistent "$flag" 1 >/dev/null 2>"$work/err"
    if grep -q "unknown or incomplete option '$flag'" "$work/err"; then
      echo "  $flag is listed by --help but not parsed" >&2
      return 1
    fi
  done
  echo "$flags" | grep -qx -- --request-timeout && echo "$flags" | grep -qx -- --allowed-origins
}
check help_flags_are_parsed help_flags_are_parsed
check serve_help run 0 serve --help
for flag in --header-timeout --body-timeout --request-timeout --max-connections --max-connections-per-client; do
  check "bad_${flag#--}" bash -c "run 2 serve --model '$model' $flag -1 && err_has 'bad value for $flag'"
done
check fractional_seconds_are_usage_errors_where_integers bash -c \
  "run 2 serve --model '$model' --timeout 1.5 && err_has 'bad value for --timeout'"
check serve_refuses_unknown_quantization bash -c "run 1 serve --model '$model' --port 0 --quantize q5 && err_has \"quantize 'q5' is not one of q8, q4, none\""
check empty_allowed_hosts bash -c "run 2 serve --model '$model' --allowed-hosts '' && err_has 'bad value for --allowed-hosts'"
check allowed_hosts_with_an_empty_entry bash -c \
  "run 1 serve --model '$model' --port 0 --allowed-hosts 'a.example,,b.example' && err_has 'empty entry' && one_line_error"
finish
