"""Cross-checks vlm's tables of Transformers defaults (the config records of src/io/configs,
printed by the vlm-dump-config-defaults tool) against the pinned Transformers
classes themselves, field by field.

  python tools/oracle/check_config_defaults.py BUILD/vlm-dump-config-defaults

Needs only requirements-ci.txt (no torch). For every model type vlm has a
table for: the class name and model_type, every listed field against the
class's dataclass default (not to_dict(), which holds values __post_init__
derives), default_theta, attribute_map, and each sub-config's class, AutoConfig
flag and init_kwargs. For every image processor and processor class: each
listed field against the class attribute or __init__ default (and a
processor's images_kwargs against its class attribute). For
GenerationConfig: each field against _get_default_generation_params(), or the
dataclass default where generate() has no fallback. For every record's
tokenizer registration: the class against TOKENIZER_MAPPING_NAMES (as this
environment resolves it) and the flag against
MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS. Prints one line per table
and "N passed, N failed"; exits 1 on any difference.
"""
import dataclasses
import enum
import inspect
import json
import subprocess
import sys

import transformers
from transformers import CONFIG_MAPPING, AutoConfig, GenerationConfig

MISSING = object()


def normalize(value):
    """JSON's view of a Python default: tuples are lists, enums their values."""
    if isinstance(value, enum.Enum):
        return normalize(value.value)
    if isinstance(value, (list, tuple)):
        return [normalize(item) for item in value]
    if isinstance(value, dict):
        return {key: normalize(item) for key, item in value.items()}
    return value


def same(expected, actual):
    expected, actual = normalize(expected), normalize(actual)
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return float(expected) == float(actual)
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(same(a, b) for a, b in zip(expected, actual))
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(same(expected[k], actual[k]) for k in expected)
    return expected == actual


def class_defaults(cls):
    """Dataclass field defaults (Transformers 5 configs), else __init__ defaults."""
    defaults = {}
    if dataclasses.is_dataclass(cls):
        for field in dataclasses.fields(cls):
            if field.default is not dataclasses.MISSING:
                defaults[field.name] = field.default
            elif field.default_factory is not dataclasses.MISSING:
                defaults[field.name] = field.default_factory()
    for name, parameter in inspect.signature(cls.__init__).parameters.items():
        if parameter.default is not inspect.Parameter.empty and name not in defaults:
            defaults[name] = parameter.default
    return defaults


def check_fields(label, fields, lookup, problems):
    for name, expected in fields.items():
        actual = lookup(name)
        if actual is MISSING:
            problems.append(f"{label}.{name}: not a field of the Transformers class")
        elif not same(expected, actual):
            problems.append(f"{label}.{name}: vlm has {json.dumps(expected)}, Transformers "
                            f"{json.dumps(normalize(actual), default=repr)}")


def sub_config_spec(value):
    """(model_type, auto, init_kwargs) of a sub_configs_defaults entry."""
    config_class = getattr(value, "config_class", value)
    model_type = getattr(value, "model_type", None) or getattr(config_class, "model_type", None)
    init_kwargs = getattr(value, "init_kwargs", None) or {}
    return model_type, config_class is AutoConfig, init_kwargs


def check_model(model_type, table):
    problems = []
    cls = CONFIG_MAPPING[model_type]
    if cls.__name__ != table["class"] or cls.model_type != table["model_type"]:
        problems.append(f"class: vlm has {table['class']}/{table['model_type']}, "
                        f"Transformers {cls.__name__}/{cls.model_type}")
    defaults = class_defaults(cls)
    check_fields(model_type, table.get("fields", {}), lambda name: defaults.get(name, MISSING), problems)
    if "default_theta" in table and not same(table["default_theta"], getattr(cls, "default_theta", None)):
        problems.append(f"default_theta: vlm has {table['default_theta']}, "
                        f"Transformers {getattr(cls, 'default_theta', None)}")
    if not same(table.get("attribute_map", {}), getattr(cls, "attribute_map", {}) or {}):
        problems.append(f"attribute_map: vlm has {table.get('attribute_map', {})}, "
                        f"Transformers {getattr(cls, 'attribute_map', {})}")
    transformers_subs = getattr(cls, "sub_configs_defaults", None) or {}
    for key, spec in table.get("sub_configs", {}).items():
        if key not in transformers_subs:
            problems.append(f"sub_configs.{key}: not a sub-config of {cls.__name__}")
            continue
        sub_type, auto, init_kwargs = sub_config_spec(transformers_subs[key])
        if (sub_type, auto) != (spec["model_type"], spec["auto"]):
            problems.append(f"sub_configs.{key}: vlm has {spec['model_type']} auto={spec['auto']}, "
                            f"Transformers {sub_type} auto={auto}")
        # vlm keeps only the init_kwargs that matter for inference.
        check_fields(f"{model_type}.sub_configs.{key}.init_kwargs", spec.get("init_kwargs", {}),
                     lambda name: init_kwargs.get(name, MISSING), problems)
    for key in transformers_subs:
        if key not in table.get("sub_configs", {}):
            problems.append(f"sub_configs.{key}: Transformers has it, vlm's table does not")
    return problems


def usable_classes(class_name):
    """The torchvision-backed class and its PIL twin (<Name>Pil), those whose
    backends are installed: CI has no torch, so there only the PIL one."""
    from transformers.utils.import_utils import DummyObject
    classes = [getattr(transformers, name, None) for name in (class_name, class_name + "Pil")]
    return [cls for cls in classes if cls is not None and not isinstance(cls, DummyObject)]


# Image processors Transformers 5.23 implements with torchvision only.
TORCHVISION_ONLY = ("Phi4MultimodalImageProcessor",)


def check_image_processor(class_name, table):
    problems = []
    classes = usable_classes(class_name)
    if not classes and class_name in TORCHVISION_ONLY and not transformers.utils.is_torchvision_available():
        print(f"SKIP(torchvision): {class_name} has no Pil twin; .venv-oracle checks it")
        return []
    if not classes:
        return [f"{class_name}: no such Transformers class (or neither backend installed)"]
    for cls in classes:
        defaults = class_defaults(cls)

        def lookup(name, cls=cls, defaults=defaults):
            value = getattr(cls, name, MISSING)
            if value is MISSING or inspect.isroutine(value) or isinstance(value, property):
                value = defaults.get(name, None)  # unset class attributes read as None
            return value

        check_fields(cls.__name__, table["fields"], lookup, problems)
    return problems


def check_processor(class_name, table):
    cls = getattr(transformers, class_name, None)
    if cls is None:
        return [f"{class_name}: no such Transformers class"]
    defaults = class_defaults(cls)
    problems = []
    check_fields(class_name, table["fields"], lambda name: defaults.get(name, MISSING), problems)
    # What the processor passes its image processor unless the call says
    # otherwise (ProcessorMixin._merge_kwargs, its modality attributes).
    images_kwargs = getattr(cls, "images_kwargs", None) or {}
    listed = table.get("images_kwargs", {})
    if set(listed) != set(images_kwargs):
        problems.append(f"{class_name}.images_kwargs: keys {sorted(listed)} != Transformers' {sorted(images_kwargs)}")
    check_fields(f"{class_name}.images_kwargs", listed, lambda name: images_kwargs.get(name, MISSING), problems)
    return problems


def check_generation(table):
    fallbacks = GenerationConfig._get_default_generation_params()
    defaults = class_defaults(GenerationConfig)
    problems = []
    check_fields("GenerationConfig", table["fields"],
                 lambda name: fallbacks.get(name, defaults.get(name, None)), problems)
    return problems


def check_tokenizers(registrations):
    from transformers.models.auto import tokenization_auto
    problems = []
    incorrect = set(getattr(tokenization_auto, "MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS", ()))
    for model_type, entry in registrations.items():
        registered = tokenization_auto.TOKENIZER_MAPPING_NAMES.get(model_type)
        if entry["class"] != registered:
            problems.append(f"{model_type}: vlm registers {entry['class']}, TOKENIZER_MAPPING_NAMES {registered}")
        if entry["hub_class_incorrect"] != (model_type in incorrect):
            problems.append(f"{model_type}: vlm has hub_class_incorrect={entry['hub_class_incorrect']}, "
                            f"Transformers {model_type in incorrect}")
    return problems


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    tables = json.loads(subprocess.run([sys.argv[1]], check=True, capture_output=True, text=True).stdout)
    checks = [(f"model {name}", lambda n=name, t=table: check_model(n, t))
              for name, table in tables["models"].items()]
    checks += [(f"image processor {name}", lambda n=name, t=table: check_image_processor(n, t))
               for name, table in tables["image_processors"].items()]
    checks += [(f"processor {name}", lambda n=name, t=table: check_processor(n, t))
               for name, table in tables["processors"].items()]
    checks.append(("generation config", lambda: check_generation(tables["generation"])))
    checks.append(("tokenizer registrations", lambda: check_tokenizers(tables["tokenizers"])))
    passed = failed = 0
    print(f"transformers {transformers.__version__}")
    for label, check in checks:
        problems = check()
        if problems:
            failed += 1
            print(f"FAIL {label}")
            for problem in problems:
                print(f"       {problem}")
        else:
            passed += 1
            print(f"ok   {label}")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
