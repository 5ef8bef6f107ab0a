"""Youtu-LLM through `vlm serve` on cpu: every chat golden case of the tiny
Youtu-LLM (tests/goldens/youtu: multi-head latent attention, its cache the
latent; real Qwen3 tokenizer) streamed with the official OpenAI client gives
Transformers' greedy text and prompt length, the raw-prompt case through
/v1/completions too, and 16 mixed requests on 4 slots each equal the
request alone (slots at different lengths read their own latents). The xla
backend refuses the family (tests/cli/mla.sh).

Run: .venv-server/bin/python tests/server/test_youtu.py [-v]"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_qwen2_vl as qwen2_vl  # noqa: E402


class YoutuServerTests(qwen2_vl.Qwen2VLServerTests):
    family = "youtu"
    # Chunks of 8 rows: prompts prefill over several chunks, each reading
    # the latents the earlier ones cached.
    arguments = qwen2_vl.Qwen2VLServerTests.arguments + ("--prefill-chunk", "8")

    @classmethod
    def cases(cls):
        return [(name, manifest) for name, manifest in qwen2_vl.golden_cases(cls.family) if manifest.get("messages")]

    def test_models_report_images(self):
        entry = self.client.models.list().data[0].model_dump()
        self.assertEqual(entry["capabilities"]["modalities"]["input"], ["text"])

    def test_raw_prompt_streams_transformers_text(self):
        raw = [(name, manifest) for name, manifest in qwen2_vl.golden_cases(self.family) if manifest.get("prompt")
               and not manifest.get("messages")]
        self.assertTrue(raw)
        for name, manifest in raw:
            with self.subTest(case=name):
                greedy = qwen2_vl.stage(manifest, "greedy_tokens")["tokens"]
                text, usage = "", None
                for chunk in self.client.completions.create(model=self.family, prompt=manifest["prompt"],
                                                            max_tokens=len(greedy), temperature=0, stream=True,
                                                            stream_options={"include_usage": True}):
                    if chunk.choices:
                        text += chunk.choices[0].text or ""
                    if chunk.usage:
                        usage = chunk.usage
                self.assertEqual(text, qwen2_vl.stage(manifest, "text")["text"])
                self.assertEqual(usage.completion_tokens, len(greedy))
                self.assertEqual(usage.prompt_tokens, qwen2_vl.stage(manifest, "input_ids")["shape"][-1])


if __name__ == "__main__":
    unittest.main()
