import '@mantine/core/styles.css';
import '@mantine/notifications/styles.css';
import './theme.css';
import { MantineProvider } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { ApiError } from './api/client';
import { App } from './App';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A refusal (4xx) will not change by asking again; a network blip might.
      retry: (n, err) => !(err instanceof ApiError && err.status < 500) && n < 2,
      refetchOnWindowFocus: false,
      staleTime: 10_000,
    },
  },
});

// The default theme's variables come from @mantine/core/styles.css; the provider's runtime <style> tags (theme
// variables, responsive classes) are off so the console runs under `style-src 'self'` (no inline styles).
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider withCssVariables={false} withGlobalClasses={false} defaultColorScheme="light">
      <Notifications />
      <QueryClientProvider client={queryClient}>
        <BrowserRouter>
          <App />
        </BrowserRouter>
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
