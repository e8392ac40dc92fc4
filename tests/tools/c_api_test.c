/* Compiled as C99: proves baton.h is a C header and the library works without C++. */
#include <stdio.h>
#include <string.h>

#include "baton/baton.h"

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                                \
    }                                                                          \
  } while (0)

int main(int argc, char** argv) {
  baton_model* model = NULL;
  CHECK(baton_model_open("/nonexistent.gguf", NULL, &model) == BATON_ERROR_IO);
  CHECK(model == NULL);
  CHECK(strstr(baton_last_error(), "/nonexistent.gguf") != NULL);

  FILE* probe = argc > 2 ? fopen(argv[1], "rb") : NULL;
  if (!probe) {
    printf("no model and adapter files given or found; skipping the generation part\n");
    return 77;
  }
  fclose(probe);

  baton_model_params model_params = baton_default_model_params();
  model_params.backend = "no-such-backend";
  CHECK(baton_model_open(argv[1], &model_params, &model) == BATON_ERROR_BACKEND);
  CHECK(strstr(baton_last_error(), "no-such-backend") != NULL);

  model_params.backend = "cpu";
  const baton_lora_adapter missing = {"missing", "/nonexistent-adapter.gguf", 1.0f};
  model_params.lora_adapters = &missing;
  model_params.lora_adapter_count = 1;
  CHECK(baton_model_open(argv[1], &model_params, &model) == BATON_ERROR_IO);
  CHECK(strstr(baton_last_error(), "/nonexistent-adapter.gguf") != NULL);

  model_params.lora_adapters = NULL;
  model_params.lora_adapter_count = 0;
  CHECK(baton_model_open(argv[1], &model_params, &model) == BATON_OK);
  baton_generation_params params = baton_default_generation_params();
  params.temperature = 0.0f;
  params.max_tokens = 16;
  char* text = NULL;
  size_t count = 0;
  CHECK(baton_generate(model, "In the beginning", &params, &text, &count) == BATON_OK);
  CHECK(count == 16);
  CHECK(strstr(text, "of the LORD") != NULL);
  baton_string_free(text);

  /* The bundled adapter, trained on The Devil's Dictionary, changes what the model says. */
  const baton_lora_adapter devil = {"devil", argv[2], 1.0f};
  baton_model_params with_lora = model_params;
  with_lora.lora_adapters = &devil;
  with_lora.lora_adapter_count = 1;
  baton_model* adapted = NULL;
  CHECK(baton_model_open(argv[1], &with_lora, &adapted) == BATON_OK);
  char* base_text = NULL;
  char* adapted_text = NULL;
  CHECK(baton_generate(adapted, "ABSURDITY, n.", &params, &base_text, NULL) == BATON_OK);
  params.lora = "devil";
  CHECK(baton_generate(adapted, "ABSURDITY, n.", &params, &adapted_text, NULL) == BATON_OK);
  CHECK(strcmp(base_text, adapted_text) != 0);
  baton_string_free(base_text);
  baton_string_free(adapted_text);
  baton_model_free(adapted);

  params.lora = "no-such-adapter";
  CHECK(baton_generate(model, "Once", &params, &text, &count) == BATON_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(baton_last_error(), "no-such-adapter") != NULL);
  params.lora = NULL;

  /* A JSON Schema and a regular expression: the output follows each, with sampling. */
  params.temperature = 1.0f;
  params.max_tokens = 64;
  params.json_schema =
      "{\"type\": \"object\", \"properties\": {\"n\": {\"type\": "
      "\"integer\", \"minimum\": 1, \"maximum\": 9}}, \"required\": [\"n\"]}";
  CHECK(baton_generate(model, "The answer:", &params, &text, NULL) == BATON_OK);
  CHECK(text[0] == '{' && strstr(text, "\"n\"") != NULL && text[strlen(text) - 1] == '}');
  baton_string_free(text);
  params.json_schema = NULL;
  params.regex = "(yea|nay), [0-9]{3}";
  CHECK(baton_generate(model, "The answer:", &params, &text, NULL) == BATON_OK);
  CHECK((strncmp(text, "yea, ", 5) == 0 || strncmp(text, "nay, ", 5) == 0) && strlen(text) >= 8);
  baton_string_free(text);
  params.json_schema = "{\"type\": \"string\"}";
  CHECK(baton_generate(model, "Once", &params, &text, NULL) == BATON_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(baton_last_error(), "at most one") != NULL);
  params.regex = NULL;
  params.json_schema = "{\"type\": \"string\", \"format\": \"email\"}";
  CHECK(baton_generate(model, "Once", &params, &text, NULL) == BATON_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(baton_last_error(), "#/format") != NULL);
  params.json_schema = NULL;
  params.temperature = 0.0f;

  params.max_tokens = -1;
  CHECK(baton_generate(model, "Once", &params, &text, &count) == BATON_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(baton_last_error(), "max_tokens") != NULL);
  baton_model_free(model);
  printf("C API ok\n");
  return 0;
}
