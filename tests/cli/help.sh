#!/usr/bin/env bash
# The help texts tell the truth: `vlm --help`, `run --help` and `serve --help`
# name for images and audio exactly the families the registry has those paths
# for (tests/cli/help_check.py families), and every --option that run, serve,
# tokenize, inspect, compile, compare, families and pull list in --help is one their
# parser accepts (help_check.py options). Arguments: VLM MAKE_TINY SOURCE_DIR.
source "$(dirname "$0")/lib.sh" "$@"
check help_names_the_registry_families python3 "$source_dir/tests/cli/help_check.py" "$vlm" families
for command in run serve tokenize inspect compile compare families pull; do
  check "help_options_parse_$command" python3 "$source_dir/tests/cli/help_check.py" "$vlm" options "$command"
done
# tokenize --help shows the --chat options too (they used to be only under
# `tokenize --chat --help`).
check tokenize_help_lists_chat_options bash -c 'run 0 tokenize --help && out_has "--add-generation-prompt" && out_has "--ids" && out_has "--tools"'
finish
